/** The JobStore contract against memory, SQLite (better-sqlite3) and PostgreSQL. */
import Database from "better-sqlite3";
import pg from "pg";
import { join } from "node:path";
import { afterAll, describe } from "vitest";
import { MemoryJobStore } from "../../adapters/jobs/memory-store.ts";
import { JOBS_SCHEMA, SqlJobStore } from "../../adapters/jobs/sql-store.ts";
import { pgDriver, sqliteDriver } from "../../adapters/jobs/sql-drivers.ts";
import type { SyncSqlite } from "../../adapters/storage/sqlite-counters.ts";
import { tempDatabase } from "../helpers/pg.ts";
import { tempDir } from "../helpers/temp.ts";
import { jobStoreContract } from "./job-store-contract.ts";

describe("MemoryJobStore", () => jobStoreContract(async () => new MemoryJobStore()));

describe("SqlJobStore on SQLite, one server owning the file", () => {
  const db = new Database(join(tempDir("quarry-jobs-"), "jobs.db"));
  afterAll(() => db.close());
  jobStoreContract(async () => {
    const s = new SqlJobStore(sqliteDriver(db as unknown as SyncSqlite));
    await s.init(true);
    return s;
  }, { singleOwner: true });
});

describe("SqlJobStore on SQLite, claims in the file", () => {
  const db = new Database(join(tempDir("quarry-jobs-"), "jobs.db"));
  afterAll(() => db.close());
  jobStoreContract(async () => {
    const s = new SqlJobStore(sqliteDriver(db as unknown as SyncSqlite));
    await s.init(false);
    return s;
  });
});

describe("SqlJobStore on PostgreSQL", () => {
  let pool: pg.Pool | null = null;
  let drop: (() => Promise<void>) | null = null;
  afterAll(async () => {
    await pool?.end();
    await drop?.();
  });
  jobStoreContract(async () => {
    if (!pool) {
      const t = await tempDatabase("jobstore");
      drop = t.drop;
      pool = new pg.Pool({ connectionString: t.url, max: 3 });
      await pool.query(JOBS_SCHEMA);
    }
    const s = new SqlJobStore(pgDriver(pool));
    await s.init(false);
    return s;
  });
});
