/**
 * PostgreSQL counters share a turn's round trips (#33): the commits and usage reads asked for in
 * one turn of the event loop go in one statement each, with the same results as one by one
 * (admissions stay one statement each: their batching is withdrawn, see pg-counters.ts). What a user depends on: limits stay exact across instances, every answered unit is
 * counted, and one request's failure stays that request's (a batch that fails whole used to fail
 * every request of the turn: 9 of 300 in a loaded multi-instance run, 6a3b071).
 *
 * Statements are counted on the pool (every query the counters send), not timed.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgCounters } from "../../adapters/storage/pg-counters.ts";
import { openPostgres, type PgHandle } from "../../adapters/storage/postgres.ts";
import { StorageError } from "../../core/errors.ts";
import type { AdmitRequest } from "../../core/ports.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { tempDatabase } from "../helpers/pg.ts";

let db: { url: string; drop(): Promise<void> };
const handles: PgHandle[] = [];
/** Every statement sent by the pools opened here, by its text. */
const sent: string[] = [];

async function instance(): Promise<PgCounters> {
  const h = await openPostgres(db.url, new MemoryLogger());
  handles.push(h);
  const query = h.pool.query.bind(h.pool) as (...a: unknown[]) => unknown;
  (h.pool as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
    sent.push(String(a[0]));
    return query(...a);
  };
  return new PgCounters(h.pool, { databaseClock: false });
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
  it("50 commits and 50 usage reads asked in one turn are one statement each (50 admissions, 50), and count exactly", async () => {
    const c = await instance();
    await c.admit(req(newKey("warm"))); // the first admission of an instance also sweeps expired leases
    const key = newKey("fifty");
    const admitted = await counted(() => Promise.all(Array.from({ length: 50 }, () => c.admit(req(key, { quota: 30 })))));
    expect(admitted.statements).toHaveLength(50);
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
      await admin.query(`CREATE OR REPLACE FUNCTION quarry_test_poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.key_id = '${poisoned}' THEN RAISE EXCEPTION 'poisoned key'; END IF; RETURN NEW; END $$`);
      await admin.query("CREATE TRIGGER quarry_test_poison BEFORE INSERT ON quarry_reservations FOR EACH ROW EXECUTE FUNCTION quarry_test_poison()");
      const admissions = await Promise.allSettled([...Array.from({ length: 10 }, () => c.admit(req(good))), c.admit(req(poisoned))]);
      expect(admissions.slice(0, 10).every((r) => r.status === "fulfilled" && r.value.ok)).toBe(true);
      expect(admissions[10]!.status).toBe("rejected");
      expect((admissions[10] as PromiseRejectedResult).reason).toBeInstanceOf(StorageError);

      await admin.query("DROP TRIGGER quarry_test_poison ON quarry_reservations");
      const late = await c.admit(req(poisoned));
      expect(late.ok).toBe(true);
      await admin.query("CREATE TRIGGER quarry_test_poison BEFORE INSERT ON quarry_usage FOR EACH ROW EXECUTE FUNCTION quarry_test_poison()");
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
});
