/**
 * The abort controllers of the page tasks this process runs, by job: what cancelling, stopping or
 * pausing aborts. Pausing (the server is stopping) aborts every task that has not begun its page's
 * request, and every task tracked from then on, but lets the requests under way finish.
 */
/** How long after a pause the page requests under way may go on (the server's own drain is as long). */
export const READ_GRACE_MS = 10_000;

export class RunningTasks {
  private readonly byJob = new Map<string, Set<AbortController>>();
  private readonly requesting = new WeakSet<AbortController>();
  private pausedFor: string | null = null;
  private pausedAt = 0;

  /** Registers a task's controller (aborted at once when paused); returns its removal. */
  track(jobId: string, ac: AbortController): () => void {
    if (this.pausedFor !== null) ac.abort(new Error(this.pausedFor));
    let set = this.byJob.get(jobId);
    if (!set) this.byJob.set(jobId, (set = new Set()));
    set.add(ac);
    return () => {
      set.delete(ac);
      if (set.size === 0) this.byJob.delete(jobId);
    };
  }

  /** The task's page request begins: a pause lets it finish (a stop or a cancel still aborts it). */
  reading(ac: AbortController): void {
    this.requesting.add(ac);
  }

  /** Aborts every task not yet reading its page, and every task tracked from now on. */
  pause(reason: string, now: number): void {
    this.pausedFor = reason;
    this.pausedAt = now;
    for (const set of this.byJob.values()) for (const ac of set) if (!this.requesting.has(ac)) ac.abort(new Error(reason));
  }

  /** Tasks running now (from when the queue hands one out until it returns), all jobs together. */
  get size(): number {
    let n = 0;
    for (const set of this.byJob.values()) n += set.size;
    return n;
  }

  get paused(): boolean {
    return this.pausedFor !== null;
  }

  /**
   * Stopping: once `drained` (the queue's tasks have returned) or READ_GRACE_MS after a pause
   * (without one, at once), aborts every task still running; resolves when `drained` does.
   */
  async stop(drained: Promise<void>, now: number): Promise<void> {
    if (this.pausedFor !== null) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([drained, new Promise((r) => (timer = setTimeout(r, this.pausedAt + READ_GRACE_MS - now)))]);
      clearTimeout(timer);
    }
    this.abort("shutting down");
    await drained;
  }

  /**
   * Aborts the tasks of jobs that ended elsewhere (another instance, or the `quarry jobs cancel`
   * CLI, cancelled them in the store): jobs with tasks here, absent from `active` (the store's
   * active jobs, read before) and confirmed `ended` (read again: a job created since is not in
   * `active` either). Returns the jobs whose tasks were aborted.
   */
  async abortEnded(active: string[], ended: (jobId: string) => Promise<boolean>): Promise<string[]> {
    const live = new Set(active);
    const gone: string[] = [];
    for (const jobId of [...this.byJob.keys()]) {
      if (live.has(jobId) || !(await ended(jobId))) continue;
      this.abort("job ended", jobId);
      gone.push(jobId);
    }
    return gone;
  }

  /** Aborts one job's tasks, or every task when no job is named. */
  abort(reason: string, jobId?: string): void {
    const sets = jobId === undefined ? [...this.byJob.values()] : [this.byJob.get(jobId) ?? new Set<AbortController>()];
    for (const set of sets) for (const ac of set) ac.abort(new Error(reason));
  }
}

/** Quota units this process holds for each job's pages under way (reserved, not yet settled). */
export class QuotaHolds {
  private readonly held = new Map<string, number>();

  of(jobId: string): number {
    return this.held.get(jobId) ?? 0;
  }

  add(jobId: string, delta: number): void {
    const n = this.of(jobId) + delta;
    if (n > 0) this.held.set(jobId, n);
    else this.held.delete(jobId);
  }
}
