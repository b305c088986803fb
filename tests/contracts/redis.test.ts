/** The Counters contract against real Redis (with PostgreSQL behind it), plus re-seeding after Redis loses its data. */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisCounters } from "../../adapters/storage/redis-counters.ts";
import { RedisCache } from "../../adapters/storage/redis-cache.ts";
import { openPostgres, type PgHandle } from "../../adapters/storage/postgres.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { tempDatabase } from "../helpers/pg.ts";
import { cacheContract } from "./cache-contract.ts";
import { countersContract } from "./counters-contract.ts";

const REDIS_URL = process.env.QUARRY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
let h: PgHandle;
let db: { url: string; drop(): Promise<void> };
let redis: Redis;
const caches: RedisCache[] = [];
const CACHE_BASE = `quarry:test-cache-${process.pid}`;
const prefixKeys = async () => redis.keys("quarry:{key_contract_*");

beforeAll(async () => {
  db = await tempDatabase("redis");
  h = await openPostgres(db.url, new MemoryLogger());
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  const left = await prefixKeys();
  if (left.length) await redis.del(...left);
  const own = await redis.keys("quarry:{key_redis_*");
  if (own.length) await redis.del(...own);
  const cached = await redis.keys(`${CACHE_BASE}*`);
  if (cached.length) await redis.del(...cached);
  await Promise.all(caches.map((c) => c.close()));
  redis.disconnect();
  await h?.close();
  await db?.drop();
});

let cacheSeq = 0;
// Redis keeps time itself (EX in whole seconds), so the TTL case waits for real.
cacheContract("Redis", async (limits) => {
  const cache = new RedisCache(redis, { base: `${CACHE_BASE}-${cacheSeq++}`, ...limits });
  caches.push(cache);
  return { cache, pass: (ms) => new Promise((r) => setTimeout(r, ms)) };
});

countersContract("Redis + PostgreSQL write-through", async () => new RedisCounters(redis, h.pool, { redisClock: false }), { shared: true });

describe("Redis specifics", () => {

  it("a commit counts in Redis only once PostgreSQL holds it; until then its lease holds the quota", async () => {
    // While the write-through waits (here: on a lock), the answer has not left. If the instance
    // died now, nothing may stay counted: no other instance may see the unit as used.
    const a = new RedisCounters(redis, h.pool);
    const b = new RedisCounters(redis, h.pool);
    const keyId = `key_redis_held_${Date.now()}`;
    const req = { keyId, now: 0, perMinute: 1000, windowMs: 60_000, period: "2026-11", group: "scrape", quota: 1 };
    const r = await a.admit(req);
    if (!r.ok) throw new Error("not admitted");
    const locker = await h.pool.connect();
    let pending: Promise<number> | null = null;
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE quarry_usage IN EXCLUSIVE MODE");
      pending = a.commit(r.ticket!);
      for (let i = 0; i < 100; i++) {
        const waiting = await h.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()");
        if (waiting.rows[0].n > 0) break;
        await new Promise((res) => setTimeout(res, 20));
      }
      expect((await b.usage(keyId, "2026-11")).used).toBe(0);
      const second = await b.admit(req);
      expect(second.ok).toBe(false); // the lease still holds the only unit
    } finally {
      await locker.query("ROLLBACK");
      locker.release();
    }
    expect(await pending).toBe(1);
    expect((await b.usage(keyId, "2026-11")).used).toBe(1);
    expect((await b.admit(req)).ok).toBe(false);
  });

  it("a commit whose write-through fails counts nowhere and frees its lease at once", async () => {
    const c = new RedisCounters(redis, h.pool);
    const keyId = `key_redis_fail_${Date.now()}`;
    const req = { keyId, now: 0, perMinute: 1000, windowMs: 60_000, period: "2026-11", group: "scrape", quota: 1 };
    const r = await c.admit(req);
    if (!r.ok) throw new Error("not admitted");
    const locker = await h.pool.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE quarry_usage IN EXCLUSIVE MODE");
      let settled = false;
      const pending = c.commit(r.ticket!).then(() => "committed", (e: Error) => e.name).finally(() => (settled = true));
      // Cancel every write waiting on the lock until the commit has its answer: the admission's window
      // log may wait there first, and under load the commit's own write may queue only after it.
      for (let i = 0; i < 250 && !settled; i++) {
        await h.pool.query("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()");
        await new Promise((res) => setTimeout(res, 20));
      }
      expect(await pending).toBe("StorageError");
    } finally {
      await locker.query("ROLLBACK");
      locker.release();
    }
    expect((await c.usage(keyId, "2026-11")).used).toBe(0);
    expect((await c.admit(req)).ok).toBe(true);
  });

  it("every admitted unit reaches PostgreSQL exactly once", async () => {
    const c = new RedisCounters(redis, h.pool);
    const keyId = `key_redis_${Date.now()}`;
    const req = { keyId, now: 0, perMinute: 1000, windowMs: 60_000, period: "2026-11", group: "search", quota: 30 };
    const res = await Promise.all(Array.from({ length: 100 }, async () => {
      const r = await c.admit(req);
      if (r.ok && r.ticket) await c.commit(r.ticket);
      return r;
    }));
    expect(res.filter((r) => r.ok)).toHaveLength(30);
    const rows = await h.pool.query("SELECT n FROM quarry_usage WHERE key_id = $1", [keyId]);
    expect(rows.rows[0].n).toBe(30);
  });

  it("after Redis loses everything, usage and the window are re-seeded from PostgreSQL: nothing over-admitted", async () => {
    const c = new RedisCounters(redis, h.pool);
    const keyId = `key_redis_lost_${Date.now()}`;
    const req = { keyId, now: 0, perMinute: 10, windowMs: 60_000, period: "2026-11", group: "search", quota: 15 };
    for (let i = 0; i < 8; i++) {
      const r = await c.admit(req);
      expect(r.ok).toBe(true);
      if (r.ok) await c.commit(r.ticket!);
    }
    await redis.del(`quarry:{${keyId}}:w`, `quarry:{${keyId}}:u:2026-11`, `quarry:{${keyId}}:r:2026-11`); // as a Redis restart without persistence
    const after = await Promise.all(Array.from({ length: 20 }, async () => {
      const r = await c.admit(req);
      if (r.ok && r.ticket) await c.commit(r.ticket);
      return r;
    }));
    expect(after.filter((r) => r.ok)).toHaveLength(2); // the window of 10 already holds 8
    expect((await c.usage(keyId, "2026-11")).used).toBe(10);
  });
});
