/**
 * An exact sliding-window counter: admissions are kept as (millisecond, count) buckets, so
 * "at most N in any rolling 60 s" holds exactly at the clock's resolution, memory stays
 * bounded by min(N, window in ms) buckets and each check is amortised O(1).
 * Shared by the in-memory counters; the SQL and Redis adapters implement the same rule.
 */
export class SlidingWindow {
  private ms: number[] = [];
  private n: number[] = [];
  private head = 0;
  private total = 0;

  /** Drops buckets at or before `now - windowMs`. */
  private expire(now: number, windowMs: number): void {
    const cutoff = now - windowMs;
    while (this.head < this.ms.length && this.ms[this.head] <= cutoff) {
      this.total -= this.n[this.head];
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.ms.length) {
      this.ms = this.ms.slice(this.head);
      this.n = this.n.slice(this.head);
      this.head = 0;
    }
  }

  count(now: number, windowMs: number): number {
    this.expire(now, windowMs);
    return this.total;
  }

  /** Milliseconds until a request would be admitted (0 when one would be now). */
  retryAfterMs(now: number, windowMs: number, limit: number): number {
    this.expire(now, windowMs);
    let excess = this.total - limit + 1;
    for (let i = this.head; i < this.ms.length && excess > 0; i++) {
      excess -= this.n[i];
      if (excess <= 0) return this.ms[i] + windowMs - now;
    }
    return 0;
  }

  /** Records `count` admissions at `now` (which must not be earlier than the last one recorded). */
  add(now: number, count = 1): void {
    const last = this.ms.length - 1;
    if (last >= this.head && this.ms[last] === now) this.n[last] += count;
    else {
      this.ms.push(now);
      this.n.push(count);
    }
    this.total += count;
  }

  get empty(): boolean {
    return this.total === 0;
  }
}

/** Whole seconds a client should wait, at least 1 (api.md §3). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
