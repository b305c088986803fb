/**
 * A db0 connector over a `pg.Pool`. db0's own PostgreSQL connector keeps one client for
 * ever, so one dropped connection (a database restart) would break the instance until it
 * is restarted; a pool replaces broken clients and lets queries run side by side.
 */
import type { Connector, Primitive } from "db0";
import type pg from "pg";

/** db0 writes `?` placeholders; PostgreSQL wants `$1, $2, …`. Quoted text is left alone. */
export function numberPlaceholders(sql: string): string {
  let out = "";
  let n = 0;
  let quote: string | null = null;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = null;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else out += ch === "?" ? `$${++n}` : ch;
  }
  return out;
}

class PoolStatement {
  constructor(
    private readonly pool: pg.Pool,
    private readonly sql: string,
    private readonly params: unknown[] = [],
  ) {}
  bind(...params: unknown[]) {
    return new PoolStatement(this.pool, this.sql, params);
  }
  async all(...params: unknown[]) {
    return (await this.pool.query(this.sql, params.length ? params : this.params)).rows;
  }
  async run(...params: unknown[]) {
    const r = await this.pool.query(this.sql, params.length ? params : this.params);
    return { success: true, ...r };
  }
  async get(...params: unknown[]) {
    return (await this.pool.query(this.sql, params.length ? params : this.params)).rows[0];
  }
}

export function poolConnector(pool: pg.Pool): Connector<pg.Pool> {
  return {
    name: "postgresql",
    dialect: "postgresql",
    getInstance: () => pool,
    exec: (sql: string) => pool.query(sql),
    prepare: (sql: string) => new PoolStatement(pool, numberPlaceholders(sql)) as unknown as ReturnType<Connector["prepare"]>,
  } as unknown as Connector<pg.Pool>;
}

export type { Primitive };
