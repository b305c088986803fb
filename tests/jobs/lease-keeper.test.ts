/**
 * A claimed page's lease on a shared PostgreSQL job store, renewed by two hands: the keeper's
 * timer (every third of the lease, for every task running) and the task itself right before its
 * page's request (`holds()`). A renewal only succeeds against the lease its caller last knew, so
 * two at once must not make the entry look lost: a task that thought so dropped its page, which
 * then sat claimed by nobody until its lease ran out (a shared crawl stalled for
 * QUARRY_JOB_RECOVERY).
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOBS_PG_SCHEMA, JOBS_SCHEMA, SqlJobStore } from "../../adapters/jobs/sql-store.ts";
import { pgDriver } from "../../adapters/jobs/sql-drivers.ts";
import { LeaseKeeper } from "../../core/jobs/leases.ts";
import { SharedHostGate } from "../../core/jobs/politeness.ts";
import { jobRecord } from "../contracts/job-store-contract.ts";
import { tempDatabase } from "../helpers/pg.ts";

let pool: pg.Pool;
let drop: () => Promise<void>;
let store: SqlJobStore;
beforeAll(async () => {
  const t = await tempDatabase("leases");
  drop = t.drop;
  pool = new pg.Pool({ connectionString: t.url, max: 4 });
  await pool.query(JOBS_SCHEMA + JOBS_PG_SCHEMA);
  store = new SqlJobStore(pgDriver(pool));
  await store.init(false);
});
afterAll(async () => {
  await pool.end();
  await drop();
});

async function claimed(leaseMs: number) {
  const job = jobRecord({ spec: { ...jobRecord().spec, limit: 10 } });
  const task = { jobId: job.id, url: "http://x.test/a", depth: 0 };
  await store.create(job, [task], []);
  const now = Date.now();
  expect(await store.claim(task, now, leaseMs)).toBe(true);
  return { task, lease: now + leaseMs };
}

describe("LeaseKeeper on PostgreSQL", () => {
  it("two renewals of one lease at once both find it held", async () => {
    const keeper = new LeaseKeeper(store, 60_000, () => Date.now(), true);
    const { task, lease } = await claimed(60_000);
    const beat = keeper.heartbeat(task, lease);
    try {
      expect(await Promise.all([beat.holds(), beat.holds(), beat.holds()])).toEqual([true, true, true]);
      expect(await beat.holds()).toBe(true);
    } finally {
      beat.stop();
    }
  });

  it("a task checking its claim while the timer renews every held lease keeps its page", async () => {
    // A 600 ms lease: the timer renews every 200 ms, so the task's checks meet it again and again.
    const keeper = new LeaseKeeper(store, 600, () => Date.now(), true);
    const { task, lease } = await claimed(600);
    const beat = keeper.heartbeat(task, lease);
    const answers: boolean[] = [];
    try {
      for (const end = Date.now() + 2000; Date.now() < end && !answers.includes(false); ) answers.push(await beat.holds());
    } finally {
      beat.stop();
    }
    expect(answers.length).toBeGreaterThan(20);
    expect(answers.filter((a) => !a)).toEqual([]);
    // Still this task's: nobody else could claim it meanwhile.
    expect(await store.claim(task, Date.now(), 600)).toBe(false);
  });

  it("a lease that really ran out (taken by another worker) is reported lost", async () => {
    const keeper = new LeaseKeeper(store, 60_000, () => Date.now(), true);
    const { task, lease } = await claimed(100);
    const beat = keeper.heartbeat(task, lease);
    try {
      await new Promise((r) => setTimeout(r, 150));
      expect(await store.claim(task, Date.now(), 60_000)).toBe(true);
      expect(await beat.holds()).toBe(false);
    } finally {
      beat.stop();
    }
  });
});

describe("SharedHostGate on PostgreSQL", () => {
  it("a stopping server can wait until the host slots it gave back are free for the other instances", async () => {
    const gate = new SharedHostGate(store, 2, 60_000);
    const releases = await Promise.all([gate.acquire("slots.test"), gate.acquire("slots.test")]);
    const held = async () => (await pool.query("SELECT count(*)::int AS n FROM quarry_host_slots WHERE host = 'slots.test'")).rows[0].n;
    expect(await held()).toBe(2);
    for (const r of releases) r();
    await gate.settled();
    expect(await held()).toBe(0);
    // Another instance's gate gets both turns at once.
    const other = new SharedHostGate(store, 2, 60_000);
    const again = await Promise.all([other.acquire("slots.test"), other.acquire("slots.test")]);
    for (const r of again) r();
    await other.settled();
  });
});
