/**
 * Counters on embedded SQLite, with group commit. Decisions are made exactly, in memory, on
 * state seeded from SQLite the first time a key (or a key's month) is seen. Reservations live
 * in memory (a process that dies takes its unanswered requests along, uncounted); a committed
 * unit is written to SQLite before the answer leaves, concurrent commits sharing one
 * transaction. Window hits ride along in the same transactions, for restarts. One server
 * process owns a SQLite file (several instances use PostgreSQL); the CLI only reads counts.
 */
import { StorageError } from "../../core/errors.ts";
import { parseTicket, type AdmitRequest, type AdmitResult, type Counters, type DailyUsage, type UsageCount } from "../../core/ports.ts";
import { MemoryCounters } from "./memory-counters.ts";

type Row = Record<string, unknown>;

/** Window hits with no commit to ride along with are written at most this long after they were admitted. */
export const HIT_FLUSH_MS = 250;
/** A key's window rows older than the window are deleted at most this often (they are never read). */
const EXPIRE_EVERY_MS = 1_000;
export interface SyncStatement {
  get(...params: unknown[]): Row | undefined | null;
  all(...params: unknown[]): Row[];
  run(...params: unknown[]): unknown;
}
/** The part of a synchronous SQLite handle used here; better-sqlite3, bun:sqlite and node:sqlite all have it. */
export interface SyncSqlite {
  exec(sql: string): unknown;
  prepare(sql: string): SyncStatement;
}

export const SQLITE_COUNTER_SCHEMA = `
CREATE TABLE IF NOT EXISTS quarry_window (key_id TEXT NOT NULL, ms INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (key_id, ms)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS quarry_usage (key_id TEXT NOT NULL, period TEXT NOT NULL, grp TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (key_id, period, grp)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS quarry_usage_daily (key_id TEXT NOT NULL, period TEXT NOT NULL, day TEXT NOT NULL, grp TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (key_id, period, day, grp)) WITHOUT ROWID;
`;

type Op =
  | { kind: "hit"; keyId: string; ms: number; windowMs: number }
  | { kind: "count"; keyId: string; period: string; group: string; day: string }
  | { kind: "refund"; keyId: string; period: string; group: string; day: string };

export class SqliteCounters implements Counters {
  /** Decisions only: the days are kept in SQLite, not in memory. */
  private readonly mem = new MemoryCounters(false);
  private readonly q;
  private queue: Op[] = [];
  private waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;

  constructor(private readonly db: SyncSqlite) {
    db.exec(SQLITE_COUNTER_SCHEMA);
    const p = (sql: string) => db.prepare(sql);
    this.q = {
      buckets: p("SELECT ms, n FROM quarry_window WHERE key_id = ? AND ms > ? ORDER BY ms"),
      expire: p("DELETE FROM quarry_window WHERE key_id = ? AND ms <= ?"),
      hit: p("INSERT INTO quarry_window (key_id, ms, n) VALUES (?, ?, ?) ON CONFLICT (key_id, ms) DO UPDATE SET n = n + excluded.n"),
      count: p("INSERT INTO quarry_usage (key_id, period, grp, n) VALUES (?, ?, ?, ?) ON CONFLICT (key_id, period, grp) DO UPDATE SET n = n + excluded.n"),
      refund: p("UPDATE quarry_usage SET n = n - 1 WHERE key_id = ? AND period = ? AND grp = ? AND n > 0"),
      groups: p("SELECT grp, n FROM quarry_usage WHERE key_id = ? AND period = ?"),
      countDay: p("INSERT INTO quarry_usage_daily (key_id, period, day, grp, n) VALUES (?, ?, ?, ?, ?) ON CONFLICT (key_id, period, day, grp) DO UPDATE SET n = n + excluded.n"),
      refundDay: p("UPDATE quarry_usage_daily SET n = n - 1 WHERE key_id = ? AND period = ? AND day = ? AND grp = ? AND n > 0"),
      days: p("SELECT day, grp, n FROM quarry_usage_daily WHERE key_id = ? AND period = ? AND n > 0"),
    };
  }

  private readGroups(keyId: string, period: string): Record<string, number> {
    return Object.fromEntries(this.q.groups.all(keyId, period).map((r) => [String(r.grp), Number(r.n)]));
  }

  private load(keyId: string, period: string, now: number, windowMs: number): void {
    try {
      const buckets = this.mem.holds(keyId) ? null : this.q.buckets.all(keyId, now - windowMs).map((r): [number, number] => [Number(r.ms), Number(r.n)]);
      if (buckets || !this.mem.holds(keyId, period)) {
        this.mem.seed(keyId, buckets, this.mem.holds(keyId, period) ? undefined : period, this.readGroups(keyId, period));
      }
    } catch (err) {
      throw new StorageError(`SQLite: ${(err as Error).message}`, { cause: err });
    }
  }

  async admit(req: AdmitRequest): Promise<AdmitResult> {
    if (!this.mem.holds(req.keyId) || !this.mem.holds(req.keyId, req.period)) this.load(req.keyId, req.period, req.now, req.windowMs);
    const result = this.mem.admitNow(req);
    // The window is only read back after a restart: its write rides along with the next commit,
    // or goes within HIT_FLUSH_MS when none comes (a transaction per turn of unmetered reads cost
    // more than the reads). A crash loses at most that much of the window, never a counted unit.
    if (result.ok && req.window !== false) {
      this.queue.push({ kind: "hit", keyId: req.keyId, ms: req.now, windowMs: req.windowMs });
      if (!this.scheduled && !this.hitTimer) (this.hitTimer = setTimeout(() => this.flushHits(), HIT_FLUSH_MS)).unref?.();
    }
    return result;
  }

  async commit(ticket: string): Promise<number> {
    const t = parseTicket(ticket);
    // Read once for both (a split into five strings, twice, was 1.5 % of a cached POST's CPU on Deno).
    const used = this.mem.commitNow(ticket, t);
    // A failed transaction makes memory forget the key, so it is read back from SQLite (without
    // this unit) on its next request; the caller answers 503.
    await this.write({ kind: "count", keyId: t.keyId, period: t.period, group: t.group, day: t.day });
    return used;
  }

  async release(ticket: string): Promise<void> {
    await this.mem.release(ticket);
  }

  async refund(keyId: string, period: string, group: string, day: string): Promise<void> {
    if (!this.mem.holds(keyId, period)) this.mem.seed(keyId, null, period, this.readGroups(keyId, period));
    if (this.mem.refundNow(keyId, period, group, day)) await this.write({ kind: "refund", keyId, period, group, day });
  }

  async daily(keyIds: string[], period: string): Promise<Record<string, DailyUsage>> {
    const out: Record<string, DailyUsage> = {};
    try {
      for (const id of keyIds) {
        const rows = this.q.days.all(id, period);
        if (!rows.length) continue;
        const days: DailyUsage = (out[id] = {});
        for (const r of rows) (days[String(r.day)] ??= {})[String(r.grp)] = Number(r.n);
      }
    } catch (err) {
      throw new StorageError(`SQLite: ${(err as Error).message}`, { cause: err });
    }
    return out;
  }

  async usage(keyId: string, period: string): Promise<UsageCount> {
    if (this.mem.holds(keyId, period)) return this.mem.usageNow(keyId, period);
    const groups = this.readGroups(keyId, period);
    return { used: Object.values(groups).reduce((a, b) => a + b, 0), groups };
  }

  private hitTimer: ReturnType<typeof setTimeout> | null = null;
  /** The cutoff each key's window rows were last deleted up to (in a committed transaction). */
  private readonly expired = new Map<string, number>();

  private flushHits(): void {
    this.hitTimer = null;
    if (!this.scheduled && this.queue.length) this.flush();
  }

  /** Writes what is queued now (at close: the window hits still waiting). */
  flushNow(): void {
    if (this.hitTimer) clearTimeout(this.hitTimer);
    this.hitTimer = null;
    if (this.queue.length) this.flush();
  }

  /** Queues a write; resolves once the transaction holding it has committed. */
  private write(op: Op): Promise<void> {
    this.queue.push(op);
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.scheduled) {
      this.scheduled = true;
      // Right after the current I/O phase: requests that arrived together share the transaction,
      // and a lone request waits for nothing but its own commit.
      setImmediate(() => this.flush());
    }
    return done;
  }

  private flush(): void {
    // The hits' timer is left to run: a flush takes every hit queued so far, so it finds nothing
    // or only later hits, which it then writes within HIT_FLUSH_MS of being queued, as promised.
    // Clearing and arming it again each turn of metered requests was a timer per turn (on Deno a
    // timer costs several times an immediate).
    if (!this.queue.length) {
      this.scheduled = false;
      return;
    }
    const ops = this.queue;
    const waiters = this.waiters;
    this.queue = [];
    this.waiters = [];
    this.scheduled = false;
    const hits = new Map<string, number>();
    const counts = new Map<string, number>();
    const cutoffs = new Map<string, number>();
    const expiredNow: Array<[string, number]> = [];
    for (const op of ops) {
      if (op.kind === "hit") {
        const h = `${op.keyId}\u0000${op.ms}`;
        hits.set(h, (hits.get(h) ?? 0) + 1);
        cutoffs.set(op.keyId, Math.max(cutoffs.get(op.keyId) ?? 0, op.ms - op.windowMs));
      } else if (op.kind === "count") {
        const c = `${op.keyId}\u0000${op.period}\u0000${op.group}\u0000${op.day}`;
        counts.set(c, (counts.get(c) ?? 0) + 1);
      }
    }
    try {
      this.db.exec("BEGIN IMMEDIATE");
      try {
        for (const [h, n] of hits) {
          const [keyId, ms] = h.split("\u0000");
          this.q.hit.run(keyId, Number(ms), n);
        }
        for (const [c, n] of counts) {
          const [keyId, period, group, day] = c.split("\u0000");
          this.q.count.run(keyId, period, group, n);
          this.q.countDay.run(keyId, period, day, group, n);
        }
        for (const op of ops) {
          if (op.kind !== "refund") continue;
          this.q.refund.run(op.keyId, op.period, op.group);
          this.q.refundDay.run(op.keyId, op.period, op.day, op.group);
        }
        // Rows older than the window are never read (the window is read `ms > now - window`): a
        // key's are deleted at most once a second, not in every transaction.
        for (const [keyId, cutoff] of cutoffs) {
          if (cutoff - (this.expired.get(keyId) ?? -Infinity) < EXPIRE_EVERY_MS) continue;
          this.q.expire.run(keyId, cutoff);
          expiredNow.push([keyId, cutoff]);
        }
        this.db.exec("COMMIT");
        for (const [keyId, cutoff] of expiredNow) this.expired.set(keyId, cutoff);
      } catch (err) {
        try {
          this.db.exec("ROLLBACK");
        } catch {
          // SQLite already rolled back
        }
        throw err;
      }
    } catch (err) {
      // What memory decided was not stored: forget those keys so the next request reads SQLite again.
      for (const op of ops) this.mem.forget(op.keyId);
      const e = new StorageError(`SQLite: ${(err as Error).message}`, { cause: err });
      for (const w of waiters) w.reject(e);
      return;
    }
    for (const w of waiters) w.resolve();
  }
}
