/** Opens PostgreSQL (QUARRY_DATABASE_URL): a pool, the schema, and a db0 database over the pool. */
import { createHash } from "node:crypto";
import { createDatabase, type Database } from "db0";
import pg from "pg";
import { StorageError } from "../../core/errors.ts";
import type { Logger } from "../../core/ports.ts";
import { poolConnector } from "./pg-connector.ts";
import { PG_MIGRATION_LOCK, PG_SCHEMA } from "./pg-schema.ts";
import { checkFormat, DATA_FORMAT, FORMAT_TABLE, type FormatRow } from "./data-format.ts";
import { packageVersion } from "../shared/version.ts";

export interface PgHandle {
  pool: pg.Pool;
  db: Database;
  keysVersion(): Promise<string>;
  close(): Promise<void>;
}

/** The schema's digest, kept in the database once applied: instances with the same schema skip the DDL. */
const SCHEMA_DIGEST = createHash("sha256").update(PG_SCHEMA).digest("hex");

/**
 * Applies the schema under an advisory lock, and only when the database does not already have this
 * version of it. Running the DDL again on every start was not harmless: the script is one
 * transaction, and `CREATE INDEX IF NOT EXISTS` still takes its table's share lock, so an instance
 * (or a CLI command) starting beside busy ones could deadlock with their admissions. A deadlock
 * while upgrading is retried.
 */
export async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [PG_MIGRATION_LOCK]);
    try {
      // Data a newer Quarry wrote is refused before any DDL of this version touches it.
      await client.query(FORMAT_TABLE);
      const format = await client.query<FormatRow>("SELECT format, version FROM quarry_format WHERE id = 1");
      if (checkFormat(format.rows[0], packageVersion())) {
        await client.query("INSERT INTO quarry_format (id, format, version) VALUES (1, $1, $2) ON CONFLICT (id) DO UPDATE SET format = $1, version = $2", [DATA_FORMAT, packageVersion()]);
      }
      await client.query("CREATE TABLE IF NOT EXISTS quarry_schema (id INTEGER PRIMARY KEY, digest TEXT NOT NULL)");
      const { rows } = await client.query("SELECT digest FROM quarry_schema WHERE id = 1");
      if (rows[0]?.digest === SCHEMA_DIGEST) return;
      for (let attempt = 1; ; attempt++) {
        try {
          await client.query(PG_SCHEMA);
          break;
        } catch (err) {
          if ((err as { code?: string }).code !== "40P01" || attempt >= 5) throw err;
          await new Promise((r) => setTimeout(r, 50 * attempt));
        }
      }
      await client.query("INSERT INTO quarry_schema (id, digest) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET digest = $1", [SCHEMA_DIGEST]);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [PG_MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

export async function openPostgres(url: string, logger: Logger, opts: { max?: number } = {}): Promise<PgHandle> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    // A database that is down refuses at once (503 straight away); this bounds the wait for a
    // free pooled connection under load, which is queueing, not an outage.
    connectionTimeoutMillis: 10_000,
    query_timeout: 10_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection (a database restart) must not crash the process: the
  // pool re-emits its error here, and the client's own listener below has logged it already.
  pool.on("error", () => {});
  // Every client, idle or checked out (that one emits "error" only on itself, not on the pool:
  // without a listener an uncaught exception), logs its lost connection once: a checked-out one
  // reports the server's reason, then "Connection terminated unexpectedly". The query in flight
  // still fails on its own and is mapped to 503; the pool replaces the client.
  pool.on("connect", (client) => {
    let logged = false;
    client.on("error", (err) => {
      if (!logged) logger.warn({ err: err.message }, "PostgreSQL connection lost; the pool reconnects");
      logged = true;
    });
  });
  // A schema that cannot be applied (or data of a newer format) stops start-up: the pool's idle
  // connections must not keep the process alive after the one line saying so.
  await migrate(pool).catch(async (err) => {
    await pool.end().catch(() => {});
    throw err;
  });
  return {
    pool,
    db: createDatabase(poolConnector(pool)),
    async keysVersion() {
      try {
        // Named: each pooled connection parses and plans it once, then only binds it (read once a turn per instance).
        const r = await pool.query<{ v: string }>({ name: "quarry_keys_version", text: "SELECT v FROM quarry_meta WHERE k = 'keys_version'" });
        return r.rows[0]?.v ?? "0";
      } catch (err) {
        throw new StorageError(`PostgreSQL: ${(err as Error).message}`, { cause: err });
      }
    },
    close: () => pool.end(),
  };
}
