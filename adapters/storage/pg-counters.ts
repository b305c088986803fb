/**
 * Counters on PostgreSQL alone: each admission is one call of `quarry_admit` (pg-schema.ts),
 * exact across any number of instances. By default the database's clock decides the window,
 * so instances with drifting clocks still agree; tests pass their own time.
 */
import type pg from "pg";
import { StorageError } from "../../core/errors.ts";
import { dayOf } from "../../core/limits/period.ts";
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
    const [r] = await q<{ ok: boolean; reason: string | null; retry_ms: string; used: number }>(
      this.pool,
      "SELECT ok, reason, retry_ms, used FROM quarry_admit($1, $2, $3, $4, $5, $6, $7, $8, $9)",
      [req.keyId, this.opts.databaseClock ? null : req.now, req.windowMs, req.window === false ? null : req.perMinute, req.period, req.group, req.quota, ticket, RESERVATION_TTL_MS],
    );
    await this.sweep(req.now);
    if (r.ok) return { ok: true, used: r.used, ticket };
    if (r.reason === "rate_limited") return { ok: false, reason: "rate_limited", retryAfterMs: Number(r.retry_ms), used: r.used };
    return { ok: false, reason: "quota_exceeded", used: r.used };
  }

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
    const rows = await q<{ grp: string; n: number }>(this.pool, "SELECT grp, n FROM quarry_usage WHERE key_id = $1 AND period = $2", [keyId, period]);
    const groups = Object.fromEntries(rows.map((r) => [r.grp, r.n]));
    return { used: rows.reduce((a, r) => a + r.n, 0), groups };
  }
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
