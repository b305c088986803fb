/**
 * The small SQL surface the job store needs, on SQLite (the runtime's synchronous handle) and
 * PostgreSQL (a pg pool). Statements use `?` placeholders; the PostgreSQL driver numbers them.
 */
import type pg from "pg";
import { StorageError } from "../../core/errors.ts";
import type { SyncSqlite, SyncStatement } from "../storage/sqlite-counters.ts";

export type Row = Record<string, unknown>;
export type Query = (sql: string, params?: unknown[]) => Promise<Row[]>;
/** The transaction's own connection with $n placeholders (PostgreSQL), for a queue engine's statements. */
export type RawSql = (text: string, values: unknown[]) => Promise<{ rows: unknown[] }>;

export interface SqlDriver {
  dialect: "sqlite" | "pg";
  query: Query;
  /** Runs `fn` in one transaction; its queries see and make one consistent change. */
  tx<T>(fn: (q: Query, raw?: RawSql) => Promise<T>): Promise<T>;
  exec(sql: string): Promise<void>;
}

/**
 * A database call that failed, as the StorageError the gateway answers with 503 (a full disk, a
 * dropped connection); errors the caller's own code throws inside a transaction pass as they are.
 */
function storage<T>(name: string, call: () => T): T {
  try {
    return call();
  } catch (err) {
    throw asStorageError(name, err);
  }
}

async function storageAsync<T>(name: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw asStorageError(name, err);
  }
}

function asStorageError(name: string, err: unknown): StorageError {
  return err instanceof StorageError ? err : new StorageError(`${name}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

const RETURNS_ROWS = /^\s*(SELECT|WITH)\b|\bRETURNING\b/i;

/**
 * SQLite: one connection, so transactions must not interleave with other statements. Every
 * statement and transaction takes turns through one promise chain; each runs synchronously.
 */
export function sqliteDriver(db: SyncSqlite): SqlDriver {
  // Each statement is prepared once, and whether it returns rows is read from its text once.
  const statements = new Map<string, { statement: SyncStatement; returnsRows: boolean }>();
  const prepared = (sql: string) => {
    let s = statements.get(sql);
    if (!s) {
      if (statements.size > 500) statements.clear();
      statements.set(sql, (s = { statement: db.prepare(sql), returnsRows: RETURNS_ROWS.test(sql) }));
    }
    return s;
  };
  const run = (sql: string, params: unknown[] = []): Row[] =>
    storage("SQLite", () => {
      const { statement, returnsRows } = prepared(sql);
      if (returnsRows) return statement.all(...params);
      statement.run(...params);
      return [];
    });
  let turn: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = turn.then(fn, fn);
    turn = next.catch(() => {});
    return next;
  };
  return {
    dialect: "sqlite",
    query: (sql, params) => exclusive(async () => run(sql, params)),
    tx: (fn) =>
      exclusive(async () => {
        storage("SQLite", () => db.exec("BEGIN IMMEDIATE"));
        try {
          const out = await fn(async (sql, params) => run(sql, params));
          storage("SQLite", () => db.exec("COMMIT"));
          return out;
        } catch (err) {
          try {
            db.exec("ROLLBACK");
          } catch {
            // already rolled back
          }
          throw err;
        }
      }),
    exec: (sql) => exclusive(async () => void storage("SQLite", () => db.exec(sql))),
  };
}

function numbered(sql: string): string {
  let i = 0;
  return sql.replace(/\?/g, () => `$${++i}`);
}

export function pgDriver(pool: pg.Pool): SqlDriver {
  const pgCall = <T>(call: () => Promise<T>) => storageAsync("PostgreSQL", call);
  return {
    dialect: "pg",
    query: async (sql, params = []) => (await pgCall(() => pool.query(numbered(sql), params))).rows,
    tx: async (fn) => {
      const client = await pgCall(() => pool.connect());
      try {
        await pgCall(() => client.query("BEGIN"));
        const out = await fn(
          async (sql, params = []) => (await pgCall(() => client.query(numbered(sql), params))).rows,
          (text, values) => pgCall(() => client.query(text, values)),
        );
        await pgCall(() => client.query("COMMIT"));
        return out;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    exec: async (sql) => void (await pgCall(() => pool.query(sql))),
  };
}
