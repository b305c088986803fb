/** The JobStore contract against memory, SQLite (better-sqlite3) and PostgreSQL. */
import Database from "better-sqlite3";
import pg from "pg";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryJobStore } from "../../adapters/jobs/memory-store.ts";
import { JOBS_PG_SCHEMA, JOBS_SCHEMA, SqlJobStore } from "../../adapters/jobs/sql-store.ts";
import { pgDriver, sqliteDriver } from "../../adapters/jobs/sql-drivers.ts";
import type { SyncSqlite } from "../../adapters/storage/sqlite-counters.ts";
import { tempDatabase } from "../helpers/pg.ts";
import { tempDir } from "../helpers/temp.ts";
import { StorageError } from "../../core/errors.ts";
import { jobRecord, jobStoreContract } from "./job-store-contract.ts";

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

  it("pages recorded in one transaction fail alone: the others are kept, and the failed one can be recorded again", async () => {
    const s = new SqlJobStore(sqliteDriver(db as unknown as SyncSqlite));
    await s.init(true);
    const job = jobRecord({ spec: { ...jobRecord().spec, limit: 10 } });
    const [a, b, c] = ["a", "b", "c"].map((p) => ({ jobId: job.id, url: `http://x.test/${p}`, depth: 0 }));
    await s.create(job, [a!, b!, c!], []);
    const page = (url: string, data: Record<string, unknown> = {}) => ({ url, ok: true, statusCode: 200, title: null, data, error: null });
    // A value the store cannot write (JSON has no BigInt): that page's statements throw mid-transaction.
    const settled = await Promise.allSettled([s.finish(a!, page(a!.url), [], [], 1), s.finish(b!, page(b!.url, { n: 1n }), [], [], 1), s.finish(c!, page(c!.url), [], [], 1)]);
    expect(settled.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((await s.pages(job.id, 0, 10)).map((p) => p.url)).toEqual([a!.url, c!.url]);
    expect(await s.get(job.id)).toMatchObject({ completed: 2, failed: 0 });
    expect((await s.finish(b!, page(b!.url), [], [], 2)).recorded).toBe(true);
    expect(await s.get(job.id)).toMatchObject({ completed: 3 });
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
      await pool.query(JOBS_SCHEMA + JOBS_PG_SCHEMA);
    }
    const s = new SqlJobStore(pgDriver(pool));
    await s.init(false);
    return s;
  });
});

describe("SqlJobStore when the database fails", () => {
  // A full disk, a file that cannot be written or a dropped connection must reach the gateway as a
  // StorageError (503 service_unavailable), not as the driver's own error (500 internal_error).
  it("SQLite that refuses writes: StorageError naming SQLite", async () => {
    const db = new Database(join(tempDir("quarry-jobs-"), "jobs.db"));
    try {
      const s = new SqlJobStore(sqliteDriver(db as unknown as SyncSqlite));
      await s.init(true);
      db.pragma("query_only = ON"); // every write now fails as on a read-only file
      const job = jobRecord();
      const err = await s.create(job, [{ jobId: job.id, url: "http://x.test/", depth: 0 }], []).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StorageError);
      expect((err as Error).message).toMatch(/^SQLite: .*readonly/i);
      expect(await s.get(job.id)).toBeNull(); // reads still work
    } finally {
      db.close();
    }
  });

  it("PostgreSQL that cannot be reached: StorageError naming PostgreSQL, for queries and transactions", async () => {
    const pool = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/none", connectionTimeoutMillis: 2000 });
    try {
      const s = new SqlJobStore(pgDriver(pool));
      const job = jobRecord();
      for (const call of [() => s.get(job.id), () => s.create(job, [], [])]) {
        const err = await call().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(StorageError);
        expect((err as Error).message).toMatch(/^PostgreSQL: /);
      }
    } finally {
      await pool.end();
    }
  });
});
