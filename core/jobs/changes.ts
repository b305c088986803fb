/**
 * Wakes the followers of a job (its SSE streams) when this process ends it, so the end reaches
 * them at once instead of at their next poll of the store. Only a hint: a follower reads the
 * store all the same, and still polls it on a timer, which is how it sees pages other instances
 * recorded and a job another instance ended.
 */
export class JobChanges {
  private readonly waiting = new Map<string, Set<() => void>>();
  /** True once close() was called: followers end after what they show now. */
  closing = false;

  /**
   * Resolves at the job's next change in this process, or after `ms`, whichever comes first. Take
   * it before reading the store: a change made while the read runs then wakes it at once.
   */
  next(id: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiting.get(id);
      if (!set) this.waiting.set(id, (set = new Set()));
      const waiters = set;
      const wake = () => {
        clearTimeout(timer);
        waiters.delete(wake);
        if (waiters.size === 0 && this.waiting.get(id) === waiters) this.waiting.delete(id);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      waiters.add(wake);
    });
  }

  /** The job changed (it ended): its followers look now. */
  changed(id: string): void {
    for (const wake of [...(this.waiting.get(id) ?? [])]) wake();
  }

  /**
   * The server is stopping: every follower looks now and then ends, so a client following a job
   * does not hold the stop for its whole grace period (it reconnects with Last-Event-ID).
   */
  close(): void {
    this.closing = true;
    for (const id of [...this.waiting.keys()]) this.changed(id);
  }

  /** Followers waiting now (for tests and leak checks). */
  get size(): number {
    let n = 0;
    for (const s of this.waiting.values()) n += s.size;
    return n;
  }
}
