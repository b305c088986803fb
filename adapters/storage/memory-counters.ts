/** In-memory Counters: exact within one process (JavaScript runs each admit to completion). */
import { dayOf } from "../../core/limits/period.ts";
import { SlidingWindow } from "../../core/limits/sliding-window.ts";
import { makeTicket, parseTicket, type AdmitRequest, type TicketParts, type AdmitResult, type Counters, type DailyUsage, type UsageCount } from "../../core/ports.ts";

export class MemoryCounters implements Counters {
  /**
   * @param days keep per-day counts (false when a durable store keeps them and this object only
   *   holds the state its decisions are made on, as in SqliteCounters).
   */
  constructor(private readonly days = true) {}

  private windows = new Map<string, SlidingWindow>();
  private usageBy = new Map<string, Map<string, number>>();
  /** `keyId|period` → day → group → count (only when this object is the store, see `days`). */
  private dailyBy = new Map<string, DailyUsage>();
  /** Reservations not yet settled, per key and period (a process that dies takes them along). */
  private pending = new Map<string, number>();
  private seq = 0;
  /**
   * `keyId|period`, the last one made: a request asks for its key's slot four to six times (the
   * window, the month's use, the reservations, the usage read), and a string made afresh each time
   * is hashed again by every Map lookup (a twentieth of an authenticated read's CPU on Bun, issue #33).
   */
  private lastSlot = { keyId: "", period: "", slot: "|" };
  private slot(keyId: string, period: string): string {
    const l = this.lastSlot;
    if (l.keyId === keyId && l.period === period) return l.slot;
    const slot = `${keyId}|${period}`;
    this.lastSlot = { keyId, period, slot };
    return slot;
  }

  private groups(keyId: string, period: string): Map<string, number> {
    const id = this.slot(keyId, period);
    let g = this.usageBy.get(id);
    if (!g) this.usageBy.set(id, (g = new Map()));
    return g;
  }

  private used(keyId: string, period: string): number {
    let sum = 0;
    for (const n of this.groups(keyId, period).values()) sum += n;
    return sum;
  }

  /** True once the key's window (or the key's usage in `period`) is held here. */
  holds(keyId: string, period?: string): boolean {
    return period === undefined ? this.windows.has(keyId) : this.usageBy.has(this.slot(keyId, period));
  }

  /** Seeds state read from durable storage (buckets in time order). */
  seed(keyId: string, buckets: Array<[number, number]> | null, period?: string, groups?: Record<string, number>): void {
    if (buckets) {
      const w = new SlidingWindow();
      for (const [ms, n] of buckets) w.add(ms, n);
      this.windows.set(keyId, w);
    }
    if (period !== undefined) this.usageBy.set(`${keyId}|${period}`, new Map(Object.entries(groups ?? {})));
  }

  /** Drops what is held for the key, so the next call reads storage again. */
  forget(keyId: string): void {
    this.windows.delete(keyId);
    for (const id of [...this.usageBy.keys()]) if (id.startsWith(`${keyId}|`)) this.usageBy.delete(id);
  }

  async admit(req: AdmitRequest): Promise<AdmitResult> {
    return this.admitNow(req);
  }

  /** The admission decision and its effect, synchronously. */
  admitNow(req: AdmitRequest): AdmitResult {
    let w = this.windows.get(req.keyId);
    if (!w) this.windows.set(req.keyId, (w = new SlidingWindow()));
    const used = this.used(req.keyId, req.period);
    const windowed = req.window !== false;
    if (windowed && w.count(req.now, req.windowMs) >= req.perMinute) {
      return { ok: false, reason: "rate_limited", retryAfterMs: w.retryAfterMs(req.now, req.windowMs, req.perMinute), used };
    }
    const slot = this.slot(req.keyId, req.period);
    const pending = this.pending.get(slot) ?? 0;
    if (req.group !== null && req.quota !== null && used + pending >= req.quota) {
      // Reported as what holds the quota: committed use plus reservations still being answered.
      return { ok: false, reason: "quota_exceeded", used: used + pending };
    }
    if (windowed) w.add(req.now);
    if (req.group === null) return { ok: true, used, ticket: null };
    this.pending.set(slot, pending + 1);
    return { ok: true, used, ticket: makeTicket(req.keyId, req.period, req.group, String(++this.seq), dayOf(req.now)) };
  }

  private unreserve(t: TicketParts): TicketParts {
    const slot = this.slot(t.keyId, t.period);
    const n = this.pending.get(slot) ?? 0;
    if (n <= 1) this.pending.delete(slot);
    else this.pending.set(slot, n - 1);
    return t;
  }

  async commit(ticket: string): Promise<number> {
    return this.commitNow(ticket);
  }

  /** `parsed`: the ticket as parseTicket reads it, when the caller has read it already (SqliteCounters). */
  commitNow(ticket: string, parsed: TicketParts = parseTicket(ticket)): number {
    const t = this.unreserve(parsed);
    const g = this.groups(t.keyId, t.period);
    g.set(t.group, (g.get(t.group) ?? 0) + 1);
    this.addDay(t.keyId, t.period, t.day, t.group, 1);
    return this.used(t.keyId, t.period);
  }

  private addDay(keyId: string, period: string, day: string, group: string, n: 1 | -1): void {
    if (!this.days) return;
    const id = `${keyId}|${period}`;
    let month = this.dailyBy.get(id);
    if (!month) this.dailyBy.set(id, (month = {}));
    const groups = (month[day] ??= {});
    const next = (groups[group] ?? 0) + n;
    if (next > 0) groups[group] = next;
    else delete groups[group];
    if (!Object.keys(groups).length) delete month[day];
  }

  async release(ticket: string): Promise<void> {
    this.unreserve(parseTicket(ticket));
  }

  async refund(keyId: string, period: string, group: string, day: string): Promise<void> {
    this.refundNow(keyId, period, group, day);
  }

  refundNow(keyId: string, period: string, group: string, day: string): boolean {
    const g = this.groups(keyId, period);
    const n = g.get(group) ?? 0;
    if (n > 0) g.set(group, n - 1);
    if (n > 0 && (this.dailyBy.get(`${keyId}|${period}`)?.[day]?.[group] ?? 0) > 0) this.addDay(keyId, period, day, group, -1);
    return n > 0;
  }

  async daily(keyIds: string[], period: string): Promise<Record<string, DailyUsage>> {
    const out: Record<string, DailyUsage> = {};
    for (const id of keyIds) {
      const month = this.dailyBy.get(`${id}|${period}`);
      if (month) out[id] = Object.fromEntries(Object.entries(month).map(([day, g]) => [day, { ...g }]));
    }
    return out;
  }

  async usage(keyId: string, period: string): Promise<UsageCount> {
    return this.usageNow(keyId, period);
  }

  usageNow(keyId: string, period: string): UsageCount {
    const groups = Object.fromEntries(this.groups(keyId, period));
    return { used: this.used(keyId, period), groups };
  }
}
