/**
 * Counters on Redis, durable in PostgreSQL.
 * - One Lua script decides each admission atomically for every instance, on Redis's own clock:
 *   the window is a sorted set of admissions, the month's use a hash.
 * - A metered admission is a lease in Redis (a sorted set scored by expiry) that counts toward
 *   the quota at once. Committing it (the answer is ready) first writes the unit to PostgreSQL
 *   (concurrent commits share one statement) and only then turns the lease into use in Redis,
 *   just before the answer leaves. Redis must not count first: the write-through waits for a
 *   batch, so at any moment many answers sit in it, and an instance killed then used to leave
 *   all of them counted in Redis (10 of 19 in flight in #19) though none reached its client
 *   nor PostgreSQL. Now the lease keeps holding the unit until both are done, and a lease the
 *   dead instance leaves expires: requests it never answered are not counted in Redis.
 * - A key whose state Redis lacks (first use, expiry, a Redis restart) is seeded from
 *   PostgreSQL: the month's usage and the last minute's window, so limits stay exact.
 * - Per-day use lives only in PostgreSQL, written in the same statement as the month's unit;
 *   it is read for reports, never for admission, so Redis holds nothing more per key.
 * - While Redis is unreachable, admissions fail (503 service_unavailable): never unlimited.
 */
import { createHash } from "node:crypto";
import { batched, coalesced } from "./coalesce.ts";
import type { Redis } from "ioredis";
import type pg from "pg";
import { StorageError } from "../../core/errors.ts";
import { dayOf } from "../../core/limits/period.ts";
import { makeTicket, parseTicket, RESERVATION_TTL_MS, type AdmitRequest, type AdmitResult, type Counters, type DailyUsage, type UsageCount } from "../../core/ports.ts";
import { readDaily } from "./pg-counters.ts";

/**
 * The admissions of one key asked for in one turn of the event loop, decided in one call, one after
 * another in the order asked, each exactly as a call of its own would be (the script runs
 * atomically, so no other instance's admission falls between them). KEYS: window, month,
 * reservations. ARGV[1]: window ms, ARGV[2]: reservation ttl ms, ARGV[3]: '1' to answer the month's
 * use too; then 6 per admission: per-minute limit (-1: no window), group ('' unmetered), quota (-1:
 * none), window member, now ('' Redis's clock), ticket. Answers one row per admission: {'ok', now,
 * used} | {'rate_limited', now, used, retry ms} | {'quota_exceeded', now, used}, then with ARGV[3]
 * the month's hash (HGETALL's field, value list: admissions do not change it, so it is the month of
 * every call of the group); or {{'seed', now}} alone when Redis lacks the key's month (nothing
 * decided: the caller seeds it and asks again).
 */
const ADMIT = `
local clock
local function now_of(arg)
  if arg ~= '' then return tonumber(arg) end
  if not clock then local t = redis.call('TIME'); clock = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) end
  return clock
end
if redis.call('EXISTS', KEYS[2]) == 0 then return {{'seed', tostring(now_of(ARGV[8]))}} end
local win = tonumber(ARGV[1]); local ttl = tonumber(ARGV[2])
local out = {}
local windowed = false; local leased = false
local i = 4
while ARGV[i] do
  local limit = tonumber(ARGV[i]); local grp = ARGV[i + 1]; local quota = tonumber(ARGV[i + 2])
  local now = now_of(ARGV[i + 4])
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - win)
  local count = redis.call('ZCARD', KEYS[1])
  local used = tonumber(redis.call('HGET', KEYS[2], '_total') or '0')
  if limit >= 0 and count >= limit then
    local r = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
    out[#out + 1] = {'rate_limited', tostring(now), tostring(used), tostring(tonumber(r[2]) + win - now)}
  else
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
    local pending = redis.call('ZCARD', KEYS[3])
    if grp ~= '' and quota >= 0 and used + pending >= quota then
      out[#out + 1] = {'quota_exceeded', tostring(now), tostring(used + pending)}
    else
      if limit >= 0 then redis.call('ZADD', KEYS[1], now, ARGV[i + 3]); windowed = true end
      if grp ~= '' then redis.call('ZADD', KEYS[3], now + ttl, ARGV[i + 5]); leased = true end
      out[#out + 1] = {'ok', tostring(now), tostring(used)}
    end
  end
  i = i + 6
end
if windowed then redis.call('PEXPIRE', KEYS[1], win + 5000) end
if leased then redis.call('PEXPIRE', KEYS[3], ttl + 5000) end
if ARGV[3] == '1' then out[#out + 1] = redis.call('HGETALL', KEYS[2]) end
return out
`;

/**
 * Leases → use, after PostgreSQL has their units: one key's commits of a turn in one call, in the
 * order asked. ARGV: group, ticket pairs. Answers the month's use after each, or -1 for each when
 * Redis lost the key's month meanwhile: the caller seeds it from PostgreSQL, which already holds
 * these units, so they are not added again.
 */
const COMMIT = `
local out = {}
local kept = redis.call('EXISTS', KEYS[2]) == 1
local i = 1
while ARGV[i] do
  redis.call('ZREM', KEYS[3], ARGV[i + 1])
  if kept then
    redis.call('HINCRBY', KEYS[2], ARGV[i], 1)
    out[#out + 1] = redis.call('HINCRBY', KEYS[2], '_total', 1)
  else out[#out + 1] = -1 end
  i = i + 2
end
return out
`;

/** Seeds a key's month and window unless another instance already did. ARGV: ttl, then group/count pairs, '|', then window ms values. */
const SEED = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local i = 2; local total = 0
while ARGV[i] ~= '|' do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]); total = total + tonumber(ARGV[i + 1]); i = i + 2
end
redis.call('HSET', KEYS[2], '_total', total)
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[1]))
i = i + 1
redis.call('DEL', KEYS[1])
while ARGV[i] do redis.call('ZADD', KEYS[1], tonumber(ARGV[i]), 'seed:' .. i .. ':' .. ARGV[i]); i = i + 1 end
return 1
`;

/** Gives one committed unit back (refund, or a write-through that failed). */
const GIVE_BACK = `
if tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0') > 0 then
  redis.call('HINCRBY', KEYS[2], ARGV[1], -1); redis.call('HINCRBY', KEYS[2], '_total', -1)
end
return 1
`;

/**
 * One flush of the write-through: the window log and the units (month and day) in one statement,
 * so both commit together or not at all. Rows go in key order, so that two instances' flushes take
 * their row locks alike and never wait on each other in a cycle. Sent as a named statement: each
 * pooled connection parses and plans it once (its text was most of the bytes sent to PostgreSQL).
 */
const FLUSH = `WITH w AS (
     INSERT INTO quarry_window_log AS t (key_id, ms, n)
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::int[]) AS w (key_id, ms, n) ORDER BY key_id, ms
     ON CONFLICT (key_id, ms) DO UPDATE SET n = t.n + excluded.n RETURNING 1
   ), a AS (
     SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $8::text[], $7::int[]) AS a (key_id, period, grp, day, n)
   ), u AS (
     INSERT INTO quarry_usage AS t (key_id, period, grp, n)
     SELECT key_id, period, grp, sum(n)::int FROM a GROUP BY key_id, period, grp ORDER BY key_id, period, grp
     ON CONFLICT (key_id, period, grp) DO UPDATE SET n = greatest(0, t.n + excluded.n) RETURNING 1
   ), y AS (
     INSERT INTO quarry_usage_daily AS t (key_id, period, day, grp, n)
     SELECT key_id, period, day, grp, n FROM a ORDER BY key_id, period, day, grp
     ON CONFLICT (key_id, period, day, grp) DO UPDATE SET n = greatest(0, t.n + excluded.n) RETURNING 1
   ) SELECT (SELECT count(*) FROM w) AS w, (SELECT count(*) FROM u) AS u, (SELECT count(*) FROM y) AS y`;

const MONTH_TTL_MS = 35 * 86_400_000;

const digests = new Map<string, string>();
function sha1(script: string): string {
  let d = digests.get(script);
  if (!d) digests.set(script, (d = createHash("sha1").update(script).digest("hex")));
  return d;
}

type Asked = { req: AdmitRequest; member: string; ticket: string | null };
type Settled<R> = { ok: true; v: R } | { ok: false; e: unknown };

/**
 * Calls of one turn of the event loop answered together (`batched`, coalesce.ts), each with its own
 * answer or its own error: `all` settles every call and never throws.
 */
function perTurn<A, R>(all: (calls: A[]) => Promise<Settled<R>[]>): (call: A) => Promise<R> {
  const turn = batched<A, Settled<R>>(all, async (call) => (await all([call]))[0]!, () => false);
  return async (call) => {
    const s = await turn(call);
    if (s.ok) return s.v;
    throw s.e;
  };
}

/**
 * The calls grouped by `keyOf` (order kept within a group), the groups run side by side; a group
 * that fails fails its own calls only.
 */
async function eachGroup<A, R>(calls: A[], keyOf: (call: A) => string, run: (group: A[]) => Promise<Settled<R>[]>): Promise<Settled<R>[]> {
  const groups = new Map<string, number[]>();
  calls.forEach((c, i) => {
    const k = keyOf(c);
    const g = groups.get(k);
    if (g) g.push(i);
    else groups.set(k, [i]);
  });
  const out = new Array<Settled<R>>(calls.length);
  await Promise.all(
    [...groups.values()].map(async (idx) => {
      let rs: Settled<R>[];
      try {
        rs = await run(idx.map((i) => calls[i]!));
      } catch (e) {
        rs = idx.map(() => ({ ok: false, e }));
      }
      idx.forEach((i, j) => (out[i] = rs[j] ?? { ok: false, e: new StorageError("Redis: a call of the turn got no answer") }));
    }),
  );
  return out;
}

/** The month's use from its hash as a field, value list (HGETALL's reply in a script): groups above zero, `_total` left out. */
function usageOf(fields: string[]): UsageCount {
  const groups: Record<string, number> = {};
  let used = 0;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const n = Number(fields[i + 1]);
    if (fields[i] === "_total" || !(n > 0)) continue;
    groups[fields[i]!] = n;
    used += n;
  }
  return { used, groups };
}

type Write = { keyId: string; ms: number; period: string; group: string | null; day: string; sign: 1 | -1; window: boolean };

export class RedisCounters implements Counters {
  private seq = 0;
  private readonly tag = Math.random().toString(36).slice(2, 10);
  private queue: Write[] = [];
  private waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;
  private inFlight = 0;
  private flushes = 0;

  constructor(
    private readonly redis: Redis,
    private readonly pool: pg.Pool,
    private readonly opts: { redisClock: boolean } = { redisClock: true },
  ) {}

  /** /health's check: one PING per turn of the event loop, for every request that asked in it (coalesce.ts). */
  private readonly pingOnce = coalesced(async () => void (await this.redis.ping()));

  ping(): Promise<void> {
    return this.pingOnce();
  }

  private keys(keyId: string, period: string): [string, string, string] {
    // One hash tag per key: all three land on one slot in a Redis Cluster.
    return [`quarry:{${keyId}}:w`, `quarry:{${keyId}}:u:${period}`, `quarry:{${keyId}}:r:${period}`];
  }

  /**
   * A script by its digest (EVALSHA: 40 bytes a call instead of the script's text, which Redis
   * also hashed on every EVAL); sent whole when Redis does not have it (first use, a restart).
   */
  private async call(script: string, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      try {
        return await this.redis.evalsha(sha1(script), keys.length, ...keys, ...args);
      } catch (err) {
        if (!/^NOSCRIPT/.test((err as Error).message)) throw err;
        return await this.redis.eval(script, keys.length, ...keys, ...args);
      }
    } catch (err) {
      throw new StorageError(`Redis: ${(err as Error).message}`, { cause: err });
    }
  }

  private async pg<T extends pg.QueryResultRow>(sql: string | { name: string; text: string }, params: unknown[]): Promise<T[]> {
    try {
      return (await (typeof sql === "string" ? this.pool.query<T>(sql, params) : this.pool.query<T>({ ...sql, values: params }))).rows;
    } catch (err) {
      throw new StorageError(`PostgreSQL: ${(err as Error).message}`, { cause: err });
    }
  }

  private async seed(keyId: string, period: string, now: number, windowMs: number): Promise<void> {
    const [usage, window] = await Promise.all([
      this.pg<{ grp: string; n: number }>("SELECT grp, n FROM quarry_usage WHERE key_id = $1 AND period = $2", [keyId, period]),
      this.pg<{ ms: string; n: number }>("SELECT ms, n FROM quarry_window_log WHERE key_id = $1 AND ms > $2 ORDER BY ms", [keyId, now - windowMs]),
    ]);
    const args: (string | number)[] = [MONTH_TTL_MS];
    for (const u of usage) args.push(u.grp, u.n);
    args.push("|");
    for (const w of window) for (let i = 0; i < w.n; i++) args.push(Number(w.ms));
    await this.call(SEED, this.keys(keyId, period).slice(0, 2), args);
  }

  async admit(req: AdmitRequest): Promise<AdmitResult> {
    const member = `${this.tag}:${++this.seq}`;
    const ticket = req.group === null ? null : makeTicket(req.keyId, req.period, req.group, member, dayOf(req.now));
    return this.admitTurn({ req, member, ticket });
  }

  /**
   * A turn's admissions: one script call per key (its three Redis keys share one hash tag, so one
   * call stays on one slot of a Redis Cluster), all of them in one write (auto-pipelining).
   * Before (issue #33) each admission was its own script call: two thirds of the Redis commands
   * of an authenticated read, and a command built, written and parsed apiece.
   */
  private readonly admitTurn = perTurn<Asked, AdmitResult>((calls) =>
    eachGroup(calls, (c) => `${c.req.keyId}\u0000${c.req.period}\u0000${c.req.windowMs}`, (g) => this.admitGroup(g)),
  );

  private async admitGroup(g: Asked[]): Promise<Settled<AdmitResult>[]> {
    const first = g[0]!.req;
    const keys = this.keys(first.keyId, first.period);
    // GET /v1/usage reads the month right after its admission: the script answers it too, so the
    // read costs no command and no round trip of its own (issue #33).
    const withUsage = g.some((a) => a.req.withUsage === true);
    const args: (string | number)[] = [first.windowMs, RESERVATION_TTL_MS, withUsage ? "1" : ""];
    for (const { req, member, ticket } of g) {
      args.push(req.window === false ? -1 : req.perMinute, req.group ?? "", req.quota ?? -1, member, this.opts.redisClock ? "" : req.now, ticket ?? "");
    }
    let rows = (await this.call(ADMIT, keys, args)) as string[][];
    if (rows[0]?.[0] === "seed") {
      await this.seed(first.keyId, first.period, Number(rows[0][1]), first.windowMs);
      rows = (await this.call(ADMIT, keys, args)) as string[][];
    }
    const month = withUsage ? rows[g.length] : undefined;
    return g.map(({ req, ticket, member }, i): Settled<AdmitResult> => {
      const r = rows[i];
      if (!r) return { ok: false, e: new StorageError(`Redis: no admission answer for call ${i + 1} of ${g.length}`) };
      const used = Number(r[2]);
      if (r[0] === "rate_limited") return { ok: true, v: { ok: false, reason: "rate_limited", retryAfterMs: Number(r[3]), used } };
      if (r[0] === "quota_exceeded") return { ok: true, v: { ok: false, reason: "quota_exceeded", used } };
      if (r[0] !== "ok") return { ok: false, e: new StorageError(`Redis: unexpected admission answer ${r[0]}`) };
      // Logged for re-seeding the window after a Redis restart; it rides along with the next commit.
      if (req.window !== false) this.write({ keyId: req.keyId, ms: Number(r[1]), period: req.period, group: null, day: "", sign: 1, window: true }, false).catch(() => {});
      const ok: AdmitResult & { ok: true } = { ok: true, used, ticket };
      // The window entry (its time and member), for withdraw; the month's use, each caller its own copy.
      if (req.withdrawable === true && req.window !== false) ok.entry = `${r[1]}|${member}`;
      if (req.withUsage === true && month) ok.usage = usageOf(month);
      return { ok: true, v: ok };
    });
  }

  async commit(ticket: string): Promise<number> {
    const t = parseTicket(ticket);
    try {
      // Durable first; until the Redis step below, the lease still holds the unit for the quota.
      await this.write({ keyId: t.keyId, ms: 0, period: t.period, group: t.group, day: t.day, sign: 1, window: false }, true);
    } catch (err) {
      // Not durable, so not counted anywhere: free the lease now (the caller answers 503).
      await this.release(ticket).catch(() => {});
      throw err;
    }
    const used = await this.commitTurn({ keyId: t.keyId, period: t.period, group: t.group, ticket });
    if (used >= 0) return used;
    await this.seed(t.keyId, t.period, Date.now(), 60_000);
    return (await this.usage(t.keyId, t.period)).used;
  }

  /** A turn's commits (their units already in PostgreSQL): one script call per key, in the order asked. */
  private readonly commitTurn = perTurn<{ keyId: string; period: string; group: string; ticket: string }, number>((calls) =>
    eachGroup(calls, (c) => `${c.keyId}\u0000${c.period}`, async (g) => {
      const rows = (await this.call(COMMIT, this.keys(g[0]!.keyId, g[0]!.period), g.flatMap((c) => [c.group, c.ticket]))) as number[];
      return g.map((_, i) => ({ ok: true, v: Number(rows[i] ?? -1) }));
    }),
  );

  /**
   * Takes an admission back (gateway/speculate.ts): its window entry and its lease out of Redis,
   * and its window log entry out of PostgreSQL (a -1 on the same millisecond, riding along as the
   * +1 did), so that neither Redis nor a re-seed from the log counts it.
   */
  async withdraw(req: AdmitRequest, admitted: { ticket: string | null; entry?: string }): Promise<void> {
    const [window, , leases] = this.keys(req.keyId, req.period);
    const at = admitted.entry?.indexOf("|") ?? -1;
    try {
      await Promise.all([
        at > 0 ? this.redis.zrem(window, admitted.entry!.slice(at + 1)) : null,
        admitted.ticket ? this.redis.zrem(leases, admitted.ticket) : null,
      ]);
    } catch (err) {
      throw new StorageError(`Redis: ${(err as Error).message}`, { cause: err });
    }
    if (at > 0) {
      const ms = Number(admitted.entry!.slice(0, at));
      this.write({ keyId: req.keyId, ms, period: req.period, group: null, day: "", sign: -1, window: true }, false).catch(() => {});
    }
  }

  async release(ticket: string): Promise<void> {
    const t = parseTicket(ticket);
    try {
      await this.redis.zrem(this.keys(t.keyId, t.period)[2], ticket);
    } catch (err) {
      throw new StorageError(`Redis: ${(err as Error).message}`, { cause: err });
    }
  }

  async refund(keyId: string, period: string, group: string, day: string): Promise<void> {
    await this.call(GIVE_BACK, this.keys(keyId, period), [group]);
    await this.write({ keyId, ms: 0, period, group, day, sign: -1, window: false }, true);
  }

  async daily(keyIds: string[], period: string): Promise<Record<string, DailyUsage>> {
    return readDaily(this.pool, keyIds, period);
  }

  usage(keyId: string, period: string): Promise<UsageCount> {
    return this.usageTurn({ keyId, period });
  }

  /**
   * Usage reads asked for in one turn, one read per key (coalesce.ts: it starts after every caller
   * of the turn asked, so each answer is as fresh as a read of its own); each caller gets its own copy.
   */
  private readonly usageTurn = perTurn<{ keyId: string; period: string }, UsageCount>((calls) =>
    eachGroup(calls, (c) => `${c.keyId}\u0000${c.period}`, async (g) => {
      const u = await this.readUsage(g[0]!.keyId, g[0]!.period);
      return g.map(() => ({ ok: true, v: { used: u.used, groups: { ...u.groups } } }));
    }),
  );

  private async readUsage(keyId: string, period: string): Promise<UsageCount> {
    let h: Record<string, string>;
    try {
      h = await this.redis.hgetall(this.keys(keyId, period)[1]);
    } catch (err) {
      throw new StorageError(`Redis: ${(err as Error).message}`, { cause: err });
    }
    if (h._total === undefined) {
      const rows = await this.pg<{ grp: string; n: number }>("SELECT grp, n FROM quarry_usage WHERE key_id = $1 AND period = $2", [keyId, period]);
      h = Object.fromEntries(rows.map((row) => [row.grp, String(row.n)]));
    }
    return usageOf(Object.entries(h).flat());
  }

  /**
   * Queues a durable write; resolves once the statement carrying it has committed. A write someone
   * waits for (a commit, a refund) goes out at the end of this turn. A window entry nobody waits for
   * starts a statement only when none of this instance's is in flight; else it rides along with the
   * next one (the next commit's, or the one that starts when the flight lands): on an unmetered read
   * it was a PostgreSQL transaction per turn, as many as the Redis round trips.
   */
  private write(w: Write, waited: boolean): Promise<void> {
    this.queue.push(w);
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.scheduled && (waited || this.inFlight === 0)) this.schedule();
    return done;
  }

  private schedule(): void {
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.inFlight++;
    try {
      await this.flushQueued();
    } finally {
      this.inFlight--;
      // Window entries that waited for this flight.
      if (this.queue.length && !this.scheduled) this.schedule();
    }
  }

  private async flushQueued(): Promise<void> {
    const batch = this.queue;
    const waiters = this.waiters;
    this.queue = [];
    this.waiters = [];
    this.scheduled = false;
    const win = new Map<string, number>();
    const use = new Map<string, number>();
    for (const w of batch) {
      if (w.window) win.set(`${w.keyId}\u0000${w.ms}`, (win.get(`${w.keyId}\u0000${w.ms}`) ?? 0) + w.sign);
      if (w.group !== null) {
        const k = `${w.keyId}\u0000${w.period}\u0000${w.group}\u0000${w.day}`;
        use.set(k, (use.get(k) ?? 0) + w.sign);
      }
    }
    const wk = [...win.keys()].map((k) => k.split("\u0000"));
    const uk = [...use.keys()].map((k) => k.split("\u0000"));
    try {
      await this.pg(
        { name: "quarry_redis_flush", text: FLUSH },
        [
          wk.map((k) => k[0]), wk.map((k) => Number(k[1])), [...win.values()],
          uk.map((k) => k[0]), uk.map((k) => k[1]), uk.map((k) => k[2]), [...use.values()], uk.map((k) => k[3]),
        ],
      );
      for (const w of waiters) w.resolve();
    } catch (err) {
      for (const w of waiters) w.reject(err);
    }
    // The log only serves re-seeding the last minute; drop old rows now and then.
    if (++this.flushes % 500 === 0) this.pool.query("DELETE FROM quarry_window_log WHERE ms < $1", [Date.now() - 10 * 60_000]).catch(() => {});
  }
}
