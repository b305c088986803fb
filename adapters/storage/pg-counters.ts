/**
 * Counters on PostgreSQL alone: each admission is one call of `quarry_admit` (pg-schema.ts),
 * exact across any number of instances. By default the database's clock decides the window,
 * so instances with drifting clocks still agree; tests pass their own time.
 */
import type pg from "pg";
import { StorageError } from "../../core/errors.ts";
import { dayOf } from "../../core/limits/period.ts";
import { batched } from "./coalesce.ts";
import { makeTicket, parseTicket, RESERVATION_TTL_MS, type AdmitRequest, type AdmitResult, type Counters, type DailyUsage, type UsageCount } from "../../core/ports.ts";

async function q<T extends pg.QueryResultRow>(pool: pg.Pool, sql: string, params: unknown[]): Promise<T[]> {
  try {
    return (await pool.query<T>(sql, params)).rows;
  } catch (err) {
    throw new StorageError(`PostgreSQL: ${(err as Error).message}`, { cause: err });
  }
}

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
    const r = await this.admitTogether({ req, ticket });
    await this.sweep(req.now);
    if (r.ok) return { ok: true, used: r.used, ticket };
    if (r.reason === "rate_limited") return { ok: false, reason: "rate_limited", retryAfterMs: Number(r.retry_ms), used: r.used };
    return { ok: false, reason: "quota_exceeded", used: r.used };
  }

  /**
   * The admissions asked for in one turn of the event loop, in one statement (issue #33): one
   * round trip and one transaction instead of one each. Each is still its own call of
   * quarry_admit, run one after another in the statement, each seeing the ones before it, so the
   * decisions are those of the same calls made separately. Sorted by key, so that every instance
   * locks keys' rows in the same order and two batches never wait on each other in a cycle.
   */
  private readonly admitTogether = batched(async (calls: Array<{ req: AdmitRequest; ticket: string | null }>) => {
    const order = calls.map((_, i) => i).sort((a, b) => (calls[a]!.req.keyId < calls[b]!.req.keyId ? -1 : calls[a]!.req.keyId > calls[b]!.req.keyId ? 1 : a - b));
    const col = <T>(f: (c: { req: AdmitRequest; ticket: string | null }) => T) => order.map((i) => f(calls[i]!));
    const rows = await q<{ i: string; ok: boolean; reason: string | null; retry_ms: string; used: number }>(
      this.pool,
      `SELECT u.i, a.ok, a.reason, a.retry_ms, a.used
         FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::integer[], $5::text[], $6::text[], $7::integer[], $8::text[])
              WITH ORDINALITY AS u(key_id, now, win, lim, period, grp, quota, ticket, i)
        CROSS JOIN LATERAL quarry_admit(u.key_id, u.now, u.win, u.lim, u.period, u.grp, u.quota, u.ticket, $9) AS a
        ORDER BY u.i`,
      [
        col((c) => c.req.keyId),
        col((c) => (this.opts.databaseClock ? null : c.req.now)),
        col((c) => c.req.windowMs),
        col((c) => (c.req.window === false ? null : c.req.perMinute)),
        col((c) => c.req.period),
        col((c) => c.req.group),
        col((c) => c.req.quota),
        col((c) => c.ticket),
        RESERVATION_TTL_MS,
      ],
    );
    if (rows.length !== calls.length) throw new StorageError(`PostgreSQL: ${rows.length} admissions answered for ${calls.length} asked`);
    const out = new Array<(typeof rows)[number]>(calls.length);
    rows.forEach((r, k) => (out[order[k]!] = r));
    return out;
  });

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
    return Number(r.used);
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
    return this.usageTogether({ keyId, period });
  }

  /** The month's use of every key asked about in one turn, in one query (see admitTogether). */
  private readonly usageTogether = batched(async (calls: Array<{ keyId: string; period: string }>) => {
    const rows = await q<{ key_id: string; period: string; grp: string; n: number }>(
      this.pool,
      "SELECT u.key_id, u.period, u.grp, u.n FROM quarry_usage u JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS w(key_id, period)) w ON u.key_id = w.key_id AND u.period = w.period",
      [calls.map((c) => c.keyId), calls.map((c) => c.period)],
    );
    return calls.map((c) => {
      const groups: Record<string, number> = {};
      let used = 0;
      for (const r of rows) {
        if (r.key_id !== c.keyId || r.period !== c.period) continue;
        groups[r.grp] = r.n;
        used += r.n;
      }
      return { used, groups };
    });
  });
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
