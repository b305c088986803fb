/**
 * Tasks that failed (the store or the counters unreachable, a full disk) are tried again, so an
 * outage stalls a job only while it lasts. With the in-process queue nothing else would: the
 * task was its page's only ticket until a restart. So it goes back to the queue after a delay
 * that doubles with each of its failures in a row (1 s up to 30 s). A shared queue needs none of this: the entry keeps its claim until the lease runs
 * out, and the watchdog hands it to the queue again.
 *
 * The log gets the first failure with its reason, then at most one line every 30 s saying how
 * many more failed, not one line per page per attempt; a watchdog that cannot reach the store
 * says so once, and once more when it can again.
 */
import type { JobTask } from "../ports/job-model.ts";
import type { Logger } from "../ports.ts";

const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;
const LOG_EVERY_MS = 30_000;

export class TaskRetries {
  /** Failures in a row of each task being retried ("job id, url"). */
  private readonly attempts = new Map<string, number>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private loggedAt = -Infinity;
  private unlogged = 0;
  private stopped = false;
  private watchDown = false;

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
    /** Puts a task back in the in-process queue; null with a shared queue. */
    private readonly requeue: ((task: JobTask) => void) | null,
  ) {}

  /** A task that failed: logged (sparingly) and, with the in-process queue, tried again later. */
  failed(task: JobTask, err: unknown): void {
    this.log(task, err);
    if (!this.requeue || this.stopped) return;
    const id = `${task.jobId} ${task.url}`;
    const n = this.attempts.get(id) ?? 0;
    this.attempts.set(id, n + 1);
    const delay = Math.min(FIRST_DELAY_MS * 2 ** n, MAX_DELAY_MS);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.stopped) this.requeue?.(task);
    }, delay);
    // Never what keeps a process alive: a restart picks the task up from the store anyway.
    (timer as { unref?: () => void }).unref?.();
    this.timers.add(timer);
  }

  /** A task ran to its end (recorded, or nothing left to do): its failures are forgotten. */
  succeeded(task: JobTask): void {
    if (this.attempts.size) this.attempts.delete(`${task.jobId} ${task.url}`);
  }

  /** A watchdog round failed (the store down): said once, not every 2 s until the store answers. */
  watchFailed(err: unknown): void {
    if (!this.watchDown) this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "job watchdog failed; retrying each round until the store answers");
    this.watchDown = true;
  }

  watchWorked(): void {
    if (this.watchDown) this.logger.info({}, "job watchdog working again");
    this.watchDown = false;
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.attempts.clear();
  }

  private log(task: JobTask, err: unknown): void {
    const now = this.now();
    if (now - this.loggedAt < LOG_EVERY_MS) {
      this.unlogged++;
      return;
    }
    const fields: Record<string, unknown> = { job_id: task.jobId, url: task.url, err: err instanceof Error ? err.message : String(err) };
    if (this.unlogged) fields.more_failed = this.unlogged;
    this.logger.error(fields, this.requeue ? "job task failed; it will be tried again" : "job task failed; its page goes back to the queue when its lease runs out");
    this.loggedAt = now;
    this.unlogged = 0;
  }
}
