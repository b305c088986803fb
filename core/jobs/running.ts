/** The abort controllers of the page tasks this process runs, by job: what cancelling, stopping or pausing aborts. */
export class RunningTasks {
  private readonly byJob = new Map<string, Set<AbortController>>();

  /** Registers a task's controller; returns its removal. */
  track(jobId: string, ac: AbortController): () => void {
    let set = this.byJob.get(jobId);
    if (!set) this.byJob.set(jobId, (set = new Set()));
    set.add(ac);
    return () => {
      set.delete(ac);
      if (set.size === 0) this.byJob.delete(jobId);
    };
  }

  /** Aborts one job's tasks, or every task when no job is named. */
  abort(reason: string, jobId?: string): void {
    const sets = jobId === undefined ? [...this.byJob.values()] : [this.byJob.get(jobId) ?? new Set<AbortController>()];
    for (const set of sets) for (const ac of set) ac.abort(new Error(reason));
  }
}
