/**
 * Records `last_used_at` without a storage write on every request: at most one write per
 * key per second, off the request path; `drain()` waits for pending writes at shutdown.
 */
import { isoSeconds } from "../limits/period.ts";
import type { KeyStore, Logger } from "../ports.ts";

export class LastUsedTracker {
  private written = new Map<string, number>();
  private pending = new Set<Promise<void>>();

  constructor(
    private readonly store: KeyStore,
    private readonly logger: Logger,
    private readonly minIntervalMs = 1_000,
  ) {}

  touch(keyId: string, now: number): void {
    const last = this.written.get(keyId);
    if (last !== undefined && now - last < this.minIntervalMs) return;
    this.written.set(keyId, now);
    if (this.written.size > 100_000) this.written.delete(this.written.keys().next().value!);
    const p = this.store
      .touchKey(keyId, isoSeconds(now))
      .catch((err) => this.logger.warn({ key_id: keyId, err: String(err) }, "could not record last_used_at"))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  async drain(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
