/**
 * Redis counters share a turn's round trips (#33): the admissions, commits and usage reads of one
 * key asked for in one turn of the event loop are one Redis command each, with the same decisions
 * as the calls made one by one; an unmetered admission's window log does not cost a PostgreSQL
 * transaction per turn. What a user depends on: limits stay exact across instances and every
 * answered unit is counted.
 *
 * Commands are counted on the Redis client and statements on the pool (what the counters send), not timed.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisCounters } from "../../adapters/storage/redis-counters.ts";
import { RedisCache } from "../../adapters/storage/redis-cache.ts";
import { openPostgres, type PgHandle } from "../../adapters/storage/postgres.ts";
import type { AdmitRequest, AdmitResult } from "../../core/ports.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { tempDatabase } from "../helpers/pg.ts";

const REDIS_URL = process.env.QUARRY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
let db: { url: string; drop(): Promise<void> };
let h: PgHandle;
const clients: Redis[] = [];
/** Every Redis command (by name) and PostgreSQL statement the counters sent. */
const commands: string[] = [];
const statements: string[] = [];

async function instance(redisClock = true): Promise<RedisCounters> {
  return new RedisCounters(client(), h.pool, { redisClock });
}

function client(): Redis {
  const redis = new Redis(REDIS_URL, { enableAutoPipelining: true });
  clients.push(redis);
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((cmd: { name: string }, ...rest: unknown[]) => {
    commands.push(cmd.name);
    return (send as (...a: unknown[]) => unknown)(cmd, ...rest);
  }) as typeof redis.sendCommand;
  return redis;
}

beforeAll(async () => {
  db = await tempDatabase("rturns");
  h = await openPostgres(db.url, new MemoryLogger());
  const query = h.pool.query.bind(h.pool) as (...a: unknown[]) => unknown;
  (h.pool as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
    statements.push(typeof a[0] === "string" ? a[0] : String((a[0] as { text?: string }).text));
    return query(...a);
  };
});
afterAll(async () => {
  const own = [...((await clients[0]?.keys("quarry:{key_rturns_*")) ?? []), ...((await clients[0]?.keys(`${CACHE_BASE}*`)) ?? [])];
  if (own?.length) await clients[0]!.del(...own);
  for (const c of clients) c.disconnect();
  await h?.close();
  await db?.drop();
});

const CACHE_BASE = `quarry:test-rturns-cache-${process.pid}`;
let seq = 0;
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const req = (keyId: string, over: Partial<AdmitRequest> = {}): AdmitRequest => ({
  keyId, now: T0, perMinute: 1000, windowMs: 60_000, period: "2026-11", group: "scrape", quota: 1000, ...over,
});
const newKey = (label: string) => `key_rturns_${label}_${process.pid}_${seq++}`;
async function counted<T>(f: () => Promise<T>): Promise<{ value: T; commands: string[]; statements: string[] }> {
  const [c, s] = [commands.length, statements.length];
  const value = await f();
  return { value, commands: commands.slice(c), statements: statements.slice(s) };
}
const shape = (r: AdmitResult) => (r.ok ? { ok: true as const, used: r.used, metered: r.ticket !== null } : r);

describe("Redis counters: one command per key and turn", () => {
  it("50 admissions, 50 commits and 50 usage reads of one key asked in one turn are one Redis command each, and count exactly", async () => {
    const c = await instance();
    const key = newKey("fifty");
    await c.admit(req(key, { group: null })); // seeds the key's month from PostgreSQL
    // A fresh Redis server holds none of the counters' scripts: ioredis's first EVALSHA of one meets
    // NOSCRIPT and sends the script again with EVAL. One metered call of another key loads them, so the
    // turns below count what is sent once they are loaded (a clone-alone run on a new machine failed here).
    const warm = await c.admit(req(newKey("warm")));
    if (warm.ok) await c.commit(warm.ticket!);
    const admitted = await counted(() => Promise.all(Array.from({ length: 50 }, () => c.admit(req(key, { quota: 30 })))));
    expect(admitted.commands).toEqual(["evalsha"]);
    const ok = admitted.value.filter((r) => r.ok);
    expect(ok).toHaveLength(30);
    await new Promise((r) => setTimeout(r, 200)); // the admissions' window log written meanwhile
    const committed = await counted(() => Promise.all(ok.map((r) => c.commit(r.ticket!))));
    expect(committed.commands).toEqual(["evalsha"]);
    expect(committed.statements).toHaveLength(1);
    expect([...committed.value].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    const read = await counted(() => Promise.all(Array.from({ length: 50 }, () => c.usage(key, "2026-11"))));
    expect(read.commands).toEqual(["hgetall"]);
    expect(read.value.every((u) => u.used === 30 && u.groups.scrape === 30)).toBe(true);
    read.value[0]!.groups.scrape = 0; // each caller has its own answer
    expect(read.value[1]!.groups.scrape).toBe(30);
    const rows = await h.pool.query("SELECT n FROM quarry_usage WHERE key_id = $1", [key]);
    expect(rows.rows[0].n).toBe(30);
  });

  it("50 admissions asking for the month's use (GET /v1/usage) are one Redis command in all: the use comes with the decisions, as usage() reads it", async () => {
    const c = await instance();
    const other = await instance();
    const key = newKey("withuse");
    await c.admit(req(key, { group: null })); // seeds the key's month from PostgreSQL
    const first = await other.admit(req(key));
    await other.commit((first as { ticket: string }).ticket); // one unit, committed by another instance
    const admitted = await counted(() => Promise.all(Array.from({ length: 50 }, () => c.admit(req(key, { group: null, withUsage: true })))));
    expect(admitted.commands).toEqual(["evalsha"]);
    const alone = await c.usage(key, "2026-11");
    expect(alone).toEqual({ used: 1, groups: { scrape: 1 } });
    for (const r of admitted.value) expect(r.ok && r.usage).toEqual(alone);
    const [a, b] = admitted.value as Array<{ usage: { groups: Record<string, number> } }>;
    a!.usage.groups.scrape = 0; // each caller has its own answer
    expect(b!.usage.groups.scrape).toBe(1);
    // A call that does not ask gets no usage, in the same turn as one that does.
    const mixed = await counted(() => Promise.all([c.admit(req(key, { group: null })), c.admit(req(key, { group: null, withUsage: true }))]));
    expect(mixed.commands).toEqual(["evalsha"]);
    expect(mixed.value[0]!.ok && mixed.value[0]!.usage).toBeUndefined();
    expect(mixed.value[1]!.ok && mixed.value[1]!.usage).toEqual(alone);
  });

  it("a turn mixing keys, repeats of a key, metered and unmetered calls and quota-only calls decides as the same calls one by one", async () => {
    const c = await instance(false);
    const plan = (keys: string[]) =>
      Array.from({ length: 90 }, (_, i) => {
        const k = (i * 5 + (i >> 3)) % 3;
        if (k === 0) return req(keys[0]!, { perMinute: 7, group: i % 2 ? "search" : null, quota: null, now: T0 + i });
        if (k === 1) return req(keys[1]!, { perMinute: 11, group: "scrape", quota: 9, now: T0 + i });
        return req(keys[2]!, { perMinute: 1000, group: "scrape", quota: 13, now: T0 + i, ...(i % 3 === 0 ? { window: false } : {}) });
      });
    const oneByOne = [];
    for (const call of plan(["a1", "b1", "c1"].map(newKey))) oneByOne.push(shape(await c.admit(call)));
    const keys = ["a2", "b2", "c2"].map(newKey);
    for (const k of keys) await c.usage(k, "2026-11"); // nothing seeded yet: the turn below seeds its keys itself
    const inTurn = await counted(() => Promise.all(plan(keys).map((call) => c.admit(call))));
    // Per key: the call that finds the month missing, the seed, the call again.
    expect(inTurn.commands.filter((n) => n === "evalsha")).toHaveLength(9);
    expect(inTurn.value.map(shape)).toEqual(oneByOne);
    expect(oneByOne.filter((r) => r.ok)).toHaveLength(7 + 9 + 13);
    expect(oneByOne.some((r) => !r.ok && r.reason === "rate_limited")).toBe(true);
    expect(oneByOne.some((r) => !r.ok && r.reason === "quota_exceeded")).toBe(true);
  });

  it("N admissions of one key over three instances on Redis's clock admit exactly per_minute, and a metered quota exactly", async () => {
    const instances = [await instance(), await instance(), await instance()];
    for (const [limit, group, quota] of [[37, null, null], [1000, "scrape", 23]] as const) {
      const key = newKey(`three_${limit}`);
      await instances[0]!.admit(req(key, { perMinute: 1000, group: null, quota: null }));
      const turn = await counted(() =>
        Promise.all(Array.from({ length: 300 }, (_, i) => instances[i % 3]!.admit(req(key, { perMinute: limit, group, quota })))),
      );
      expect(turn.commands.filter((n) => n === "evalsha")).toHaveLength(3);
      expect(turn.value.filter((r) => r.ok)).toHaveLength(group === null ? limit - 1 : quota!);
    }
  });

  it("unmetered admissions' window log reaches PostgreSQL, with at most one statement in flight per instance", async () => {
    const c = await instance();
    const key = newKey("log");
    await c.admit(req(key, { group: null }));
    await new Promise((r) => setTimeout(r, 200));
    const from = statements.length;
    // The log's first statement waits on a lock while ten turns of admissions are answered.
    const locker = await h.pool.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE quarry_window_log IN EXCLUSIVE MODE");
      const all: Promise<AdmitResult>[] = [];
      for (let t = 0; t < 10; t++) {
        all.push(...Array.from({ length: 20 }, () => c.admit(req(key, { group: null }))));
        await all[all.length - 1];
      }
      expect((await Promise.all(all)).every((r) => r.ok)).toBe(true);
    } finally {
      await locker.query("ROLLBACK");
      locker.release();
    }
    let logged = 0;
    for (let i = 0; i < 100 && logged < 201; i++) {
      await new Promise((r) => setTimeout(r, 20));
      logged = (await h.pool.query("SELECT coalesce(sum(n), 0)::int AS n FROM quarry_window_log WHERE key_id = $1", [key])).rows[0].n;
    }
    expect(logged).toBe(201);
    // The one in flight, then one for everything that waited for it (a statement per turn before).
    const writes = statements.slice(from).filter((s) => s.includes("INSERT INTO quarry_window_log")).length;
    expect(writes).toBe(2);
  });

  it("50 cache reads of one entry asked in one turn are one GET, each caller with its own copy; a turn's other entries are read apart", async () => {
    const cache = new RedisCache(client(), { base: CACHE_BASE });
    await cache.set("scrape:a", { text: "A", n: 1 }, 60);
    await cache.set("scrape:b", { text: "B", n: 2 }, 60);
    const read = await counted(() => Promise.all([...Array.from({ length: 50 }, () => cache.get<{ text: string; n: number }>("scrape:a")), cache.get<{ text: string; n: number }>("scrape:b"), cache.get<{ text: string; n: number }>("scrape:none")]));
    expect(read.commands).toEqual(["get", "get", "get"]);
    expect(read.value.slice(0, 50).every((v) => v?.text === "A")).toBe(true);
    expect(read.value[50]).toEqual({ text: "B", n: 2 });
    expect(read.value[51]).toBeNull();
    read.value[0]!.n = 99;
    expect(read.value[1]!.n).toBe(1);
    // A write then a read in one turn: the read sees the write.
    const [, after] = await Promise.all([cache.set("scrape:a", { text: "A2", n: 3 }, 60), cache.get<{ text: string }>("scrape:a")]);
    expect(after?.text).toBe("A2");
  });
});
