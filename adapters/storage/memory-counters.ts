/** In-memory Counters: exact within one process (JavaScript runs each admit to completion). */
import { SlidingWindow } from "../../core/limits/sliding-window.ts";
import { makeTicket, parseTicket, type AdmitRequest, type AdmitResult, type Counters, type UsageCount } from "../../core/ports.ts";

export class MemoryCounters implements Counters {
  private windows = new Map<string, SlidingWindow>();
  private usageBy = new Map<string, Map<string, number>>();
  /** Reservations not yet settled, per key and period (a process that dies takes them along). */
  private pending = new Map<string, number>();
  private seq = 0;

  private groups(keyId: string, period: string): Map<string, number> {
    const id = `${keyId}|${period}`;
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
    return period === undefined ? this.windows.has(keyId) : this.usageBy.has(`${keyId}|${period}`);
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
    const slot = `${req.keyId}|${req.period}`;
    const pending = this.pending.get(slot) ?? 0;
    if (req.group !== null && req.quota !== null && used + pending >= req.quota) {
      // Reported as what holds the quota: committed use plus reservations still being answered.
      return { ok: false, reason: "quota_exceeded", used: used + pending };
    }
    if (windowed) w.add(req.now);
    if (req.group === null) return { ok: true, used, ticket: null };
    this.pending.set(slot, pending + 1);
    return { ok: true, used, ticket: makeTicket(req.keyId, req.period, req.group, String(++this.seq)) };
  }

  private unreserve(ticket: string): { keyId: string; period: string; group: string } {
    const t = parseTicket(ticket);
    const slot = `${t.keyId}|${t.period}`;
    const n = this.pending.get(slot) ?? 0;
    if (n <= 1) this.pending.delete(slot);
    else this.pending.set(slot, n - 1);
    return t;
  }

  async commit(ticket: string): Promise<number> {
    return this.commitNow(ticket);
  }

  commitNow(ticket: string): number {
    const t = this.unreserve(ticket);
    const g = this.groups(t.keyId, t.period);
    g.set(t.group, (g.get(t.group) ?? 0) + 1);
    return this.used(t.keyId, t.period);
  }

  async release(ticket: string): Promise<void> {
    this.unreserve(ticket);
  }

  async refund(keyId: string, period: string, group: string): Promise<void> {
    this.refundNow(keyId, period, group);
  }

  refundNow(keyId: string, period: string, group: string): boolean {
    const g = this.groups(keyId, period);
    const n = g.get(group) ?? 0;
    if (n > 0) g.set(group, n - 1);
    return n > 0;
  }

  async usage(keyId: string, period: string): Promise<UsageCount> {
    return this.usageNow(keyId, period);
  }

  usageNow(keyId: string, period: string): UsageCount {
    const groups = Object.fromEntries(this.groups(keyId, period));
    return { used: this.used(keyId, period), groups };
  }
}
