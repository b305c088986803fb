/**
 * PostgreSQL counters share a turn's round trips (#33): the admissions, commits and usage reads
 * asked for in one turn of the event loop go in one statement each, with the same decisions as
 * one by one. What a user depends on: limits stay exact across instances, every answered unit is
 * counted, and one request's failure stays that request's (a batch that fails whole used to fail
 * every request of the turn: 9 of 300 in a loaded multi-instance run, 6a3b071).
 *
 * Statements are counted on the pool (every query the counters send), not timed.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIT_GROUP, PgCounters } from "../../adapters/storage/pg-counters.ts";
import { openPostgres, type PgHandle } from "../../adapters/storage/postgres.ts";
import { StorageError } from "../../core/errors.ts";
import type { AdmitRequest } from "../../core/ports.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { tempDatabase } from "../helpers/pg.ts";

let db: { url: string; drop(): Promise<void> };
const handles: PgHandle[] = [];
/** Every statement sent by the pools opened here, by its text. */
const sent: string[] = [];

async function instance(databaseClock = false): Promise<PgCounters> {
  const h = await openPostgres(db.url, new MemoryLogger());
  handles.push(h);
  const query = h.pool.query.bind(h.pool) as (...a: unknown[]) => unknown;
  (h.pool as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
    sent.push(String(a[0]));
    return query(...a);
  };
  return new PgCounters(h.pool, { databaseClock });
}

beforeAll(async () => {
  db = await tempDatabase("turns");
});
afterAll(async () => {
  for (const h of handles) await h.close();
  await db?.drop();
});

let seq = 0;
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const req = (keyId: string, over: Partial<AdmitRequest> = {}): AdmitRequest => ({
  keyId, now: T0, perMinute: 1000, windowMs: 60_000, period: "2026-11", group: "scrape", quota: 1000, ...over,
});
const newKey = (label: string) => `key_turns_${label}_${process.pid}_${seq++}`;
/** The statements sent while `f` runs, leaving out the once-a-minute sweep of expired leases. */
async function counted<T>(f: () => Promise<T>): Promise<{ value: T; statements: string[] }> {
  const from = sent.length;
  const value = await f();
  return { value, statements: sent.slice(from).filter((s) => !s.startsWith("DELETE FROM quarry_reservations WHERE expires_at")) };
}

describe("PostgreSQL counters: one statement per turn", () => {
  it("50 admissions asked in one turn are one statement a group of ADMIT_GROUP, 50 commits and 50 usage reads one statement each, and count exactly", async () => {
    const c = await instance();
    await c.admit(req(newKey("warm"))); // the first admission of an instance also sweeps expired leases
    const key = newKey("fifty");
    const admitted = await counted(() => Promise.all(Array.from({ length: 50 }, () => c.admit(req(key, { quota: 30 })))));
    expect(admitted.statements).toHaveLength(Math.ceil(50 / ADMIT_GROUP));
    const ok = admitted.value.filter((r) => r.ok);
    expect(ok).toHaveLength(30);
    expect(admitted.value.filter((r) => !r.ok && r.reason === "quota_exceeded")).toHaveLength(20);
    const committed = await counted(() => Promise.all(ok.map((r) => c.commit(r.ticket!))));
    expect(committed.statements).toHaveLength(1);
    expect(committed.value).toEqual(ok.map(() => 30));
    const read = await counted(() => Promise.all(Array.from({ length: 50 }, () => c.usage(key, "2026-11"))));
    expect(read.statements).toHaveLength(1);
    expect(read.value.every((u) => u.used === 30 && u.groups.scrape === 30)).toBe(true);
    expect(await c.daily([key], "2026-11")).toEqual({ [key]: { "2026-11-22": { scrape: 30 } } });
  });

  it("one request's failing admission or commit fails that request alone, not the others of its turn", async () => {
    const c = await instance();
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const poisoned = newKey("poisoned");
    const good = newKey("good");
    try {
      // A real failure inside PostgreSQL for one key only: its reservation (admission) and its
      // month's row (commit) are refused by a trigger.
      await poison(admin, "quarry_test_poison", poisoned, "quarry_reservations");
      const admissions = await Promise.allSettled([...Array.from({ length: 10 }, () => c.admit(req(good))), c.admit(req(poisoned))]);
      expect(admissions.slice(0, 10).every((r) => r.status === "fulfilled" && r.value.ok)).toBe(true);
      expect(admissions[10]!.status).toBe("rejected");
      expect((admissions[10] as PromiseRejectedResult).reason).toBeInstanceOf(StorageError);

      await admin.query("DROP TRIGGER quarry_test_poison ON quarry_reservations");
      const late = await c.admit(req(poisoned));
      expect(late.ok).toBe(true);
      await poison(admin, "quarry_test_poison", poisoned, "quarry_usage");
      const tickets = admissions.slice(0, 10).map((r) => (r as PromiseFulfilledResult<{ ticket: string }>).value.ticket);
      const commits = await Promise.allSettled([...tickets.map((t) => c.commit(t)), c.commit((late as { ticket: string }).ticket)]);
      expect(commits.slice(0, 10).map((r) => r.status)).toEqual(Array(10).fill("fulfilled"));
      expect(commits[10]!.status).toBe("rejected");
      expect((await c.usage(good, "2026-11")).used).toBe(10);
      expect((await c.usage(poisoned, "2026-11")).used).toBe(0);
    } finally {
      await admin.query("DROP TRIGGER IF EXISTS quarry_test_poison ON quarry_reservations");
      await admin.query("DROP TRIGGER IF EXISTS quarry_test_poison ON quarry_usage");
      await admin.end();
    }
  });

  it("three instances admitting and committing several keys at once: exact quotas, no deadlock, every answered unit counted", async () => {
    const instances = await Promise.all([0, 1, 2].map(() => instance()));
    const keys = [0, 1, 2, 3].map((i) => newKey(`shared${i}`));
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(
        Array.from({ length: 240 }, async (_, i) => {
          const c = instances[i % 3]!;
          // Keys in every order within each instance's turn.
          const key = keys[(i * 7 + round) % keys.length]!;
          const r = await c.admit(req(key, { quota: 25 * (round + 1), now: T0 + round }));
          if (!r.ok) return { key, ok: false };
          await instances[(i + 1) % 3]!.commit(r.ticket!);
          return { key, ok: true };
        }),
      );
      for (const key of keys) {
        expect(results.filter((r) => r.key === key && r.ok)).toHaveLength(25);
        expect((await instances[round]!.usage(key, "2026-11")).used).toBe(25 * (round + 1));
      }
    }
  });
  it("N admissions of one key over three instances, each instance's turn one statement, admit exactly per_minute on the database's clock", async () => {
    const instances = await Promise.all([0, 1, 2].map(() => instance(true)));
    for (const c of instances) await c.admit(req(newKey("warm"))); // each instance's first admission also sweeps
    for (const [limit, group] of [[37, null], [23, "scrape"]] as const) {
      const key = newKey(`exact${limit}`);
      const calls = await counted(() =>
        Promise.all(Array.from({ length: 300 }, (_, i) => instances[i % 3]!.admit(req(key, { perMinute: limit, group, quota: null })))),
      );
      // One statement per group of ADMIT_GROUP on each instance (never one per call).
      expect(calls.statements).toHaveLength(3 * Math.ceil(100 / ADMIT_GROUP));
      expect(calls.value.filter((r) => r.ok)).toHaveLength(limit);
      expect(calls.value.filter((r) => !r.ok && r.reason === "rate_limited")).toHaveLength(300 - limit);
      // The next turn on any instance sees the full window too.
      expect((await instances[1]!.admit(req(key, { perMinute: limit, group, quota: null }))).ok).toBe(false);
      expect((await instances[2]!.admit(req(key, { perMinute: limit + 1, group, quota: null }))).ok).toBe(true);
    }
  });

  it("a turn mixing keys, repeats of a key, metered and unmetered calls and quota-only calls decides as the same calls one by one", async () => {
    const c = await instance();
    // 90 calls over three keys in an interleaved order: A on 7 a minute, B on 11 with a quota of 9,
    // C on 1000 a minute with a quota of 13, a third of C's calls quota-only (window: false).
    const plan = (keys: string[]) =>
      Array.from({ length: 90 }, (_, i) => {
        const k = (i * 5 + (i >> 3)) % 3;
        if (k === 0) return req(keys[0]!, { perMinute: 7, group: i % 2 ? "search" : null, quota: null });
        if (k === 1) return req(keys[1]!, { perMinute: 11, group: "scrape", quota: 9 });
        return req(keys[2]!, { perMinute: 1000, group: "scrape", quota: 13, ...(i % 3 === 0 ? { window: false } : {}) });
      });
    const shape = (r: Awaited<ReturnType<PgCounters["admit"]>>) => (r.ok ? { ok: true, used: r.used } : r);
    const oneByOne = [];
    for (const call of plan(["a1", "b1", "c1"].map(newKey))) oneByOne.push(shape(await c.admit(call)));
    const inTurn = await counted(() => Promise.all(plan(["a2", "b2", "c2"].map(newKey)).map((call) => c.admit(call))));
    expect(inTurn.statements).toHaveLength(Math.ceil(90 / ADMIT_GROUP));
    expect(inTurn.value.map(shape)).toEqual(oneByOne);
    expect(oneByOne.filter((r) => r.ok)).toHaveLength(7 + 9 + 13);
  });

  it("the window's edge holds within a turn: full at T0, still full 59.999 s later, exactly per_minute again after 60 s", async () => {
    const c = await instance();
    const key = newKey("edge");
    const turn = (now: number, n = 40) => Promise.all(Array.from({ length: n }, () => c.admit(req(key, { now, perMinute: 15, group: null }))));
    expect((await turn(T0)).filter((r) => r.ok)).toHaveLength(15);
    const held = await turn(T0 + 59_999);
    expect(held.filter((r) => r.ok)).toHaveLength(0);
    expect(held.every((r) => !r.ok && r.reason === "rate_limited" && r.retryAfterMs === 1)).toBe(true);
    expect((await turn(T0 + 60_000)).filter((r) => r.ok)).toHaveLength(15);
  });

  it("a turn PostgreSQL refused is run again call by call and counted once", async () => {
    const c = await instance();
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const poisoned = newKey("poison2");
    const good = newKey("good2");
    try {
      await poison(admin, "quarry_test_poison2", poisoned, "quarry_reservations");
      const turn = await counted(() => Promise.allSettled([...Array.from({ length: 10 }, () => c.admit(req(good, { perMinute: 10 }))), c.admit(req(poisoned))]));
      expect(turn.statements).toHaveLength(Math.ceil(11 / ADMIT_GROUP) + 11); // the turn's group, then each call alone
      expect(turn.value.slice(0, 10).every((r) => r.status === "fulfilled" && r.value.ok)).toBe(true);
      expect(turn.value[10]!.status).toBe("rejected");
    } finally {
      await admin.query("DROP TRIGGER IF EXISTS quarry_test_poison2 ON quarry_reservations");
      await admin.end();
    }
    // The ten count once in the window and the quota: the eleventh of a minute is refused, not the first of a second ten.
    expect(await c.admit(req(good, { perMinute: 10 }))).toMatchObject({ ok: false, reason: "rate_limited" });
    expect((await c.admit(req(good, { perMinute: 11, quota: 11 }))).ok).toBe(true);
    expect(await c.admit(req(good, { perMinute: 1000, quota: 11 }))).toMatchObject({ ok: false, reason: "quota_exceeded", used: 11 });
  });
});

/** Makes PostgreSQL refuse `key`'s new rows of `table` (a trigger named `name`): a real failure inside the database, for that key only. */
async function poison(admin: pg.Client, name: string, key: string, table: string): Promise<void> {
  await admin.query(`CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.key_id = '${key}' THEN RAISE EXCEPTION 'poisoned key'; END IF; RETURN NEW; END $$`);
  await admin.query(`CREATE TRIGGER ${name} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}()`);
}
