/**
 * Counters on embedded SQLite. Every admission is one `BEGIN IMMEDIATE` transaction on a
 * synchronous handle (better-sqlite3 on Node, bun:sqlite on Bun, node:sqlite on Deno), so it
 * cannot interleave with another in this process and takes SQLite's write lock against other
 * processes (the CLI). The window keeps (millisecond, count) buckets plus a running total,
 * the same exact rule as core's SlidingWindow.
 */
import type { AdmitRequest, AdmitResult, Counters, UsageCount } from "../../core/ports.ts";
import { StorageError } from "../../core/errors.ts";

type Row = Record<string, unknown>;
export interface SyncStatement {
  get(...params: unknown[]): Row | undefined | null;
  all(...params: unknown[]): Row[];
  run(...params: unknown[]): unknown;
}
/** The part of a synchronous SQLite handle the counters use; all three runtimes' drivers have it. */
export interface SyncSqlite {
  exec(sql: string): unknown;
  prepare(sql: string): SyncStatement;
}

export const SQLITE_COUNTER_SCHEMA = `
CREATE TABLE IF NOT EXISTS quarry_window (key_id TEXT NOT NULL, ms INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (key_id, ms)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS quarry_window_total (key_id TEXT PRIMARY KEY, total INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS quarry_usage (key_id TEXT NOT NULL, period TEXT NOT NULL, grp TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (key_id, period, grp)) WITHOUT ROWID;
`;

export class SqliteCounters implements Counters {
  private readonly q;

  constructor(private readonly db: SyncSqlite) {
    db.exec(SQLITE_COUNTER_SCHEMA);
    const p = (sql: string) => db.prepare(sql);
    this.q = {
      expiredSum: p("SELECT coalesce(sum(n), 0) AS s FROM quarry_window WHERE key_id = ? AND ms <= ?"),
      expire: p("DELETE FROM quarry_window WHERE key_id = ? AND ms <= ?"),
      total: p("SELECT total FROM quarry_window_total WHERE key_id = ?"),
      setTotal: p("INSERT INTO quarry_window_total (key_id, total) VALUES (?, ?) ON CONFLICT (key_id) DO UPDATE SET total = excluded.total"),
      buckets: p("SELECT ms, n FROM quarry_window WHERE key_id = ? ORDER BY ms"),
      hit: p("INSERT INTO quarry_window (key_id, ms, n) VALUES (?, ?, 1) ON CONFLICT (key_id, ms) DO UPDATE SET n = n + 1"),
      used: p("SELECT coalesce(sum(n), 0) AS s FROM quarry_usage WHERE key_id = ? AND period = ?"),
      count: p("INSERT INTO quarry_usage (key_id, period, grp, n) VALUES (?, ?, ?, 1) ON CONFLICT (key_id, period, grp) DO UPDATE SET n = n + 1"),
      refund: p("UPDATE quarry_usage SET n = n - 1 WHERE key_id = ? AND period = ? AND grp = ? AND n > 0"),
      groups: p("SELECT grp, n FROM quarry_usage WHERE key_id = ? AND period = ?"),
    };
  }

  private tx<T>(fn: () => T): T {
    try {
      this.db.exec("BEGIN IMMEDIATE");
    } catch (err) {
      throw new StorageError(`SQLite: ${(err as Error).message}`, { cause: err });
    }
    try {
      const out = fn();
      this.db.exec("COMMIT");
      return out;
    } catch (err) {
      try {
        this.db.exec("ROLLBACK");
      } catch {
        // already rolled back by SQLite
      }
      throw new StorageError(`SQLite: ${(err as Error).message}`, { cause: err });
    }
  }

  async admit(req: AdmitRequest): Promise<AdmitResult> {
    const { q } = this;
    return this.tx((): AdmitResult => {
      const cutoff = req.now - req.windowMs;
      const expired = Number(q.expiredSum.get(req.keyId, cutoff)?.s ?? 0);
      let total = Number(q.total.get(req.keyId)?.total ?? 0);
      if (expired > 0) {
        q.expire.run(req.keyId, cutoff);
        total -= expired;
        q.setTotal.run(req.keyId, total);
      }
      const used = Number(q.used.get(req.keyId, req.period)?.s ?? 0);
      if (total >= req.perMinute) {
        let excess = total - req.perMinute + 1;
        let retryAfterMs = 0;
        for (const row of q.buckets.all(req.keyId)) {
          excess -= Number(row.n);
          if (excess <= 0) {
            retryAfterMs = Number(row.ms) + req.windowMs - req.now;
            break;
          }
        }
        return { ok: false, reason: "rate_limited", retryAfterMs, used };
      }
      if (req.group !== null && req.quota !== null && used >= req.quota) {
        return { ok: false, reason: "quota_exceeded", used };
      }
      q.hit.run(req.keyId, req.now);
      q.setTotal.run(req.keyId, total + 1);
      if (req.group === null) return { ok: true, used };
      q.count.run(req.keyId, req.period, req.group);
      return { ok: true, used: used + 1 };
    });
  }

  async refund(keyId: string, period: string, group: string): Promise<void> {
    this.tx(() => this.q.refund.run(keyId, period, group));
  }

  async usage(keyId: string, period: string): Promise<UsageCount> {
    const rows = this.q.groups.all(keyId, period);
    const groups: Record<string, number> = {};
    let used = 0;
    for (const r of rows) {
      groups[String(r.grp)] = Number(r.n);
      used += Number(r.n);
    }
    return { used, groups };
  }
}
