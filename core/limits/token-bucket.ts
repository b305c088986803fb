/**
 * The gateway's per-IP token bucket (spec: 100 requests per second on average, burst 200).
 * Kept in process: it shields this instance; idle buckets are dropped so memory stays bounded.
 */
export interface BucketConfig {
  ratePerSecond: number;
  burst: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class TokenBuckets {
  private buckets = new Map<string, Bucket>();
  constructor(
    private readonly cfg: BucketConfig,
    private readonly maxEntries = 100_000,
  ) {}

  /** Takes one token; returns 0 when allowed, otherwise the milliseconds until one is available. */
  take(id: string, now: number): number {
    let b = this.buckets.get(id);
    if (!b) {
      if (this.buckets.size >= this.maxEntries) this.prune(now);
      b = { tokens: this.cfg.burst, at: now };
      this.buckets.set(id, b);
    } else {
      const refill = ((now - b.at) / 1000) * this.cfg.ratePerSecond;
      b.tokens = Math.min(this.cfg.burst, b.tokens + refill);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - b.tokens) / this.cfg.ratePerSecond) * 1000);
  }

  /** Removes buckets that have refilled completely (they hold no state worth keeping). */
  private prune(now: number): void {
    const fullAfterMs = (this.cfg.burst / this.cfg.ratePerSecond) * 1000;
    for (const [id, b] of this.buckets) if (now - b.at >= fullAfterMs) this.buckets.delete(id);
    // Still full of active clients: drop the oldest entries rather than grow without bound.
    if (this.buckets.size >= this.maxEntries) {
      let drop = this.buckets.size - this.maxEntries + 1;
      for (const id of this.buckets.keys()) {
        if (drop-- <= 0) break;
        this.buckets.delete(id);
      }
    }
  }
}
