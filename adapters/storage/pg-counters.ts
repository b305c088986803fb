/**
 * Counters on PostgreSQL alone: each admission is one call of `quarry_admit` (pg-schema.ts),
 * exact across any number of instances. By default the database's clock decides the window,
 * so instances with drifting clocks still agree; tests pass their own time.
 *
 * Round trips (#33): the admissions asked for in one turn of the event loop go in statements of
 * up to ADMIT_GROUP calls, one at a time (coalesce.ts `serialBatched`); the commits of a turn go in
 * one statement and the month's use read in a turn in another (`batched`); all with the same
 * results as one by one. What a group shares is the round trip and the transaction, so a hot key's
 * instances wait for one WAL flush a group instead of one a request (quarry_admit holds the key's
 * row lock through its commit's flush: 5.1 ms of server time a call under load, 0.30 ms batched).
 */
import type pg from "pg";
import { StorageError } from "../../core/errors.ts";
import { dayOf } from "../../core/limits/period.ts";
import { batched, serialBatched } from "./coalesce.ts";
import { makeTicket, parseTicket, RESERVATION_TTL_MS, type AdmitRequest, type AdmitResult, type Counters, type DailyUsage, type UsageCount } from "../../core/ports.ts";

async function q<T extends pg.QueryResultRow>(pool: pg.Pool, sql: string, params: unknown[]): Promise<T[]> {
  try {
    return (await pool.query<T>(sql, params)).rows;
  } catch (err) {
    throw new StorageError(`PostgreSQL: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * A batch may be run again call by call only when PostgreSQL itself reported its error: the
 * statement's transaction then rolled back whole, so nothing of the batch was applied. A lost
 * connection or a client timeout carries no SQLSTATE: the statement may have applied.
 */
function rolledBack(err: unknown): boolean {
  // PostgreSQL's error message (pg's DatabaseError) has a severity and a five-character SQLSTATE;
  // socket errors have a code too (EPIPE is five letters), but no severity.
  const cause = (err as { cause?: { code?: unknown; severity?: unknown } })?.cause;
  return typeof cause?.severity === "string" && typeof cause.code === "string" && /^[0-9A-Z]{5}$/.test(cause.code);
}

type AdmitRow = { ok: boolean; reason: string | null; retry_ms: string; used: number };
type AdmitCall = { req: AdmitRequest; ticket: string | null };
type UsageRow = { key_id: string; period: string; grp: string; n: number };

/**
 * At most this many admissions in one statement; more asked in a turn go in further statements,
 * one after another (coalesce.ts `serialBatched`).
 */
export const ADMIT_GROUP = 16;

/** How often one instance clears every key's expired reservations (see sweep()). */
export const SWEEP_EVERY_MS = 60_000;

export class PgCounters implements Counters {
  private nextSweep = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: { databaseClock: boolean } = { databaseClock: true },
  ) {}

  async admit(req: AdmitRequest): Promise<AdmitResult> {
    const ticket = req.group === null ? null : makeTicket(req.keyId, req.period, req.group, crypto.randomUUID(), dayOf(req.now));
    // A turn's admissions in groups (admitAll). The 429 rate_limited answers that had this
    // withdrawn once (a9c9f92) were not these counters': they said "Too many open connections
    // from this address (limit 256)", the Node server's connection cap (adapters/node/
    // connections.ts) refusing the multi-instance test's client past 256 connections to one
    // instance (bench/RESULTS.md, "#33 PostgreSQL admissions by turn").
    const r = await this.admitInTurn({ req, ticket });
    await this.sweep(req.now);
    if (r.ok) return { ok: true, used: r.used, ticket };
    if (r.reason === "rate_limited") return { ok: false, reason: "rate_limited", retryAfterMs: Number(r.retry_ms), used: r.used };
    return { ok: false, reason: "quota_exceeded", used: r.used };
  }

  private admitArgs(c: AdmitCall): unknown[] {
    const { req } = c;
    return [req.keyId, this.opts.databaseClock ? null : req.now, req.windowMs, req.window === false ? null : req.perMinute, req.period, req.group, req.quota, c.ticket];
  }

  private async admitAlone(c: AdmitCall): Promise<AdmitRow> {
    const [r] = await q<AdmitRow>(
      this.pool,
      "SELECT ok, reason, retry_ms, used FROM quarry_admit($1, $2, $3, $4, $5, $6, $7, $8, $9)",
      [...this.admitArgs(c), RESERVATION_TTL_MS],
    );
    return r!;
  }

  /**
   * A turn's admissions in one statement: one quarry_admit call per admission, one after another
   * in one transaction, each seeing what the ones before it wrote (a volatile function's every
   * statement takes a new snapshot and the command counter moves on), so each decision is the one
   * the same calls made one by one in that order would get. The calls are sorted by key, and by
   * arrival within a key, so that every instance takes keys' row locks in the same order (two
   * batches never wait on each other in a cycle) and one key's admissions keep their order. Each
   * call reads its own clock (clock_timestamp() at its start), as alone.
   */
  private async admitAll(calls: AdmitCall[]): Promise<AdmitRow[]> {
    const order = calls.map((_, i) => i).sort((a, b) => {
      const ka = calls[a]!.req.keyId;
      const kb = calls[b]!.req.keyId;
      return ka < kb ? -1 : ka > kb ? 1 : a - b;
    });
    const cols: unknown[][] = [[], [], [], [], [], [], [], []];
    for (const i of order) this.admitArgs(calls[i]!).forEach((v, k) => cols[k]!.push(v));
    // WITH ORDINALITY numbers the calls in the sorted order; the answers come back in it.
    const rows = await q<AdmitRow & { i: string }>(
      this.pool,
      `SELECT u.i, a.ok, a.reason, a.retry_ms, a.used
         FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::integer[], $5::text[], $6::text[], $7::integer[], $8::text[])
              WITH ORDINALITY AS u(key_id, now, win, lim, period, grp, quota, ticket, i)
        CROSS JOIN LATERAL quarry_admit(u.key_id, u.now, u.win, u.lim, u.period, u.grp, u.quota, u.ticket, $9) AS a
        ORDER BY u.i`,
      [...cols, RESERVATION_TTL_MS],
    );
    if (rows.length !== calls.length) throw new StorageError(`PostgreSQL: ${rows.length} admissions answered for ${calls.length} asked`);
    const out = new Array<AdmitRow>(calls.length);
    rows.forEach((r, k) => {
      if (Number(r.i) !== k + 1) throw new StorageError(`PostgreSQL: admission ${r.i} answered in place ${k + 1}`);
      out[order[k]!] = r;
    });
    return out;
  }

  private readonly admitInTurn = serialBatched((calls: AdmitCall[]) => this.admitAll(calls), (c: AdmitCall) => this.admitAlone(c), rolledBack, ADMIT_GROUP);

  /**
   * quarry_admit drops a key's expired reservations only when that key is admitted again, so a
   * dead instance's leases on keys that go quiet stayed for good (#19: 29 rows 6.5 min later).
   * At most once a SWEEP_EVERY_MS each instance that admits anything clears them for all keys.
   * An expired lease no longer counts toward any quota, so deleting it changes no decision.
   */
  private async sweep(now: number): Promise<void> {
    const local = this.opts.databaseClock ? Date.now() : now;
    if (local < this.nextSweep) return;
    this.nextSweep = local + SWEEP_EVERY_MS;
    await q(
      this.pool,
      "DELETE FROM quarry_reservations WHERE expires_at <= coalesce($1::bigint, (extract(epoch from clock_timestamp()) * 1000)::bigint)",
      [this.opts.databaseClock ? null : now],
    ).catch(() => {}); // the next sweep tries again; an admission never fails for it
  }

  async commit(ticket: string): Promise<number> {
    return this.commitInTurn(ticket);
  }

  private readonly commitInTurn = batched((tickets: string[]) => this.commitAll(tickets), (t: string) => this.commitAlone(t), rolledBack);

  private async commitAlone(ticket: string): Promise<number> {
    const t = parseTicket(ticket);
    // One statement: the reservation goes and the use arrives together, in the month and its
    // day. An expired lease still counts: the request was answered.
    const [r] = await q<{ used: string }>(
      this.pool,
      `WITH d AS (DELETE FROM quarry_reservations WHERE ticket = $1),
            u AS (INSERT INTO quarry_usage AS t (key_id, period, grp, n) VALUES ($2, $3, $4, 1)
                  ON CONFLICT (key_id, period, grp) DO UPDATE SET n = t.n + 1 RETURNING 1),
            y AS (INSERT INTO quarry_usage_daily AS t (key_id, period, day, grp, n) VALUES ($2, $3, $5, $4, 1)
                  ON CONFLICT (key_id, period, day, grp) DO UPDATE SET n = t.n + 1 RETURNING 1)
       SELECT coalesce(sum(n), 0) + 1 AS used FROM quarry_usage WHERE key_id = $2 AND period = $3`,
      [ticket, t.keyId, t.period, t.group, t.day],
    );
    return Number(r!.used);
  }

  /**
   * A turn's commits in one statement, as commitAlone does each: the reservations go and the
   * units arrive in the month and the day together. Rows are written in key order, so that two
   * instances' batches take their row locks alike. Each ticket gets its month's use after the
   * whole batch.
   */
  private async commitAll(tickets: string[]): Promise<number[]> {
    const ts = tickets.map(parseTicket);
    const rows = await q<{ key_id: string; period: string; used: string }>(
      this.pool,
      `WITH a AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS a (ticket, key_id, period, grp, day)),
            d AS (DELETE FROM quarry_reservations r USING a WHERE r.ticket = a.ticket),
            u AS (INSERT INTO quarry_usage AS t (key_id, period, grp, n)
                  SELECT key_id, period, grp, count(*)::int FROM a GROUP BY key_id, period, grp ORDER BY key_id, period, grp
                  ON CONFLICT (key_id, period, grp) DO UPDATE SET n = t.n + excluded.n RETURNING 1),
            y AS (INSERT INTO quarry_usage_daily AS t (key_id, period, day, grp, n)
                  SELECT key_id, period, day, grp, count(*)::int FROM a GROUP BY key_id, period, day, grp ORDER BY key_id, period, day, grp
                  ON CONFLICT (key_id, period, day, grp) DO UPDATE SET n = t.n + excluded.n RETURNING 1)
       SELECT k.key_id, k.period, (SELECT coalesce(sum(m.n), 0) FROM quarry_usage m WHERE m.key_id = k.key_id AND m.period = k.period) + k.c AS used
         FROM (SELECT key_id, period, count(*)::int AS c FROM a GROUP BY key_id, period) k`,
      [tickets, ts.map((t) => t.keyId), ts.map((t) => t.period), ts.map((t) => t.group), ts.map((t) => t.day)],
    );
    const used = new Map(rows.map((r) => [`${r.key_id}\u0000${r.period}`, Number(r.used)]));
    return ts.map((t) => {
      const n = used.get(`${t.keyId}\u0000${t.period}`);
      if (n === undefined) throw new StorageError("PostgreSQL: a committed unit's month is missing from the answer");
      return n;
    });
  }

  async release(ticket: string): Promise<void> {
    await q(this.pool, "DELETE FROM quarry_reservations WHERE ticket = $1", [ticket]);
  }

  async refund(keyId: string, period: string, group: string, day: string): Promise<void> {
    await q(
      this.pool,
      `WITH m AS (UPDATE quarry_usage SET n = n - 1 WHERE key_id = $1 AND period = $2 AND grp = $3 AND n > 0 RETURNING 1)
       UPDATE quarry_usage_daily SET n = n - 1 WHERE key_id = $1 AND period = $2 AND day = $4 AND grp = $3 AND n > 0 AND EXISTS (SELECT 1 FROM m)`,
      [keyId, period, group, day],
    );
  }

  async daily(keyIds: string[], period: string): Promise<Record<string, DailyUsage>> {
    return readDaily(this.pool, keyIds, period);
  }

  async usage(keyId: string, period: string): Promise<UsageCount> {
    return this.usageInTurn({ keyId, period });
  }

  /** The month's use of every key asked about in one turn, in one query. */
  private readonly usageInTurn = batched(
    async (calls: Array<{ keyId: string; period: string }>) => {
      const rows = await q<UsageRow>(
        this.pool,
        "SELECT u.key_id, u.period, u.grp, u.n FROM quarry_usage u WHERE (u.key_id, u.period) IN (SELECT * FROM unnest($1::text[], $2::text[]))",
        [calls.map((c) => c.keyId), calls.map((c) => c.period)],
      );
      return calls.map((c) => usageOf(rows.filter((r) => r.key_id === c.keyId && r.period === c.period)));
    },
    async (c: { keyId: string; period: string }) =>
      usageOf(await q<UsageRow>(this.pool, "SELECT key_id, period, grp, n FROM quarry_usage WHERE key_id = $1 AND period = $2", [c.keyId, c.period])),
    rolledBack,
  );
}

function usageOf(rows: UsageRow[]): UsageCount {
  const groups: Record<string, number> = {};
  let used = 0;
  for (const r of rows) {
    groups[r.grp] = r.n;
    used += r.n;
  }
  return { used, groups };
}

/** Per-day use of several keys in one query (PostgreSQL alone, and Redis mode, whose units PostgreSQL holds first). */
export async function readDaily(pool: pg.Pool, keyIds: string[], period: string): Promise<Record<string, DailyUsage>> {
  if (!keyIds.length) return {};
  const rows = await q<{ key_id: string; day: string; grp: string; n: number }>(
    pool,
    "SELECT key_id, day, grp, n FROM quarry_usage_daily WHERE key_id = ANY($1::text[]) AND period = $2 AND n > 0",
    [keyIds, period],
  );
  const out: Record<string, DailyUsage> = {};
  for (const r of rows) ((out[r.key_id] ??= {})[r.day] ??= {})[r.grp] = Number(r.n);
  return out;
}
