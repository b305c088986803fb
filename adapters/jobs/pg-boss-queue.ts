/**
 * The scaled job queue: pg-boss on the same PostgreSQL that holds the jobs. Why pg-boss and not
 * BullMQ: Quarry already requires PostgreSQL for several instances and Redis is optional, so a
 * queue in PostgreSQL adds no service; and pg-boss can insert tasks with the caller's own
 * connection, so a page's new frontier entries and their queue tasks are committed in one
 * transaction (nothing found can be lost between the two). pg-boss 10.x is the line that runs
 * on Node 20 (11+ needs Node 22).
 *
 * Each instance runs `concurrency` pg-boss workers of one task each. A task is a turn for a free
 * worker rather than an order: the worker reads the page the store's fair claim puts first
 * (JobStore.claimNext: the account with the fewest pages claimed, then the one served longest
 * ago), which may be another job's, so pg-boss's first-in-first-out order never lets one
 * account's backlog hold the others' pages behind it (issue #28). Every pending entry was
 * enqueued with a task, so there are always at least as many tasks as pages waiting; a task
 * that finds none left is a cheap no-op. When an instance dies, what
 * it held comes back within QUARRY_JOB_RECOVERY (`recoveryMs`): an entry it had claimed has a
 * lease that long (renewed by live workers), and the job engine's watchdog puts an entry whose
 * lease ran out back in the queue; a task it had taken but not yet claimed expires in pg-boss
 * after the same time (checked as often) and is retried. A task delivered twice is worked once:
 * the store's claim is conditional, so a live worker's task that pg-boss expires costs one no-op.
 *
 * An instance that is stopping (SIGTERM) takes no task from the moment stop() is called, and a task
 * it has but will not read (delivered as it stopped, or given back by the engine before its page's
 * request began) is handed back at once: a fresh copy goes in the queue, due now, and the one
 * delivered here ends as completed. Failing it instead would hold it back for pg-boss's retry
 * delay and spend one of its retries on each stop.
 */
import PgBoss from "pg-boss";
// pg-boss has no exports map: its Manager is reachable by path (the version is pinned to 10.x).
// @ts-expect-error: pg-boss ships no types for its internal modules
import Manager from "pg-boss/src/manager.js";
import type { JobQueue, TaskOutcome } from "../../core/ports.ts";
import type { JobTask } from "../../core/ports/job-model.ts";
import type { Logger } from "../../core/ports.ts";

/**
 * pg-boss 10 marks a worked task completed or failed without awaiting the write (Manager#watch).
 * With PostgreSQL down at that moment the write rejects unobserved, and Node ends the process on
 * an unhandled rejection: a crawl running when the database went away took the server with it.
 * Each such write gets a handler here (callers that await it still see the error); the task
 * stays active in pg-boss, expires after QUARRY_JOB_RECOVERY and is handed out again, and the
 * store's conditional claim makes a task already recorded a no-op.
 */
let lostWrites: (err: unknown) => void = () => {};
for (const name of ["complete", "fail"] as const) {
  const proto = (Manager as unknown as { prototype: Record<string, (...a: unknown[]) => Promise<unknown>> }).prototype;
  const write = proto[name];
  if (typeof write !== "function") continue;
  proto[name] = function (this: unknown, ...args: unknown[]) {
    const done = write.apply(this, args);
    done.catch((err) => lostWrites(err));
    return done;
  };
}

export const QUEUE_NAME = "quarry-crawl";
export type RawSql = (text: string, values: unknown[]) => Promise<{ rows: unknown[] }>;

export class PgBossQueue implements JobQueue {
  private readonly boss: PgBoss;
  private ready: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;
  private handedBack = 0;
  private readonly recoverySeconds: number;

  /**
   * `serialized` runs pg-boss's start-up (its migrations, createQueue) while holding a lock all
   * instances share: started at the same moment, they deadlock inside PostgreSQL otherwise.
   */
  constructor(
    connectionString: string,
    private readonly logger: Logger,
    private readonly serialized: <T>(fn: () => Promise<T>) => Promise<T> = (fn) => fn(),
    recoveryMs = 30_000,
  ) {
    const recoverySeconds = (this.recoverySeconds = Math.max(1, Math.ceil(recoveryMs / 1000)));
    this.boss = new PgBoss({
      connectionString,
      max: 4,
      expireInSeconds: recoverySeconds,
      maintenanceIntervalSeconds: recoverySeconds,
      retryLimit: 5,
      retryDelay: Math.min(5, recoverySeconds),
      retentionDays: 1,
      deleteAfterHours: 12,
      // Quarry's own migrations run under an advisory lock; pg-boss's run under its own.
      migrate: true,
    });
    this.boss.on("error", (err: Error) => this.logger.warn({ err: err.message }, "job queue (pg-boss) error"));
    lostWrites = (err) => this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "job queue (pg-boss) could not record a task's end; it is handed out again when it expires");
  }

  /** Starts pg-boss and creates the queue once; every instance may call it. */
  private open(): Promise<void> {
    this.ready ??= this.serialized(async () => {
      await this.boss.start();
      if (!(await this.boss.getQueue(QUEUE_NAME))) await this.boss.createQueue(QUEUE_NAME);
    });
    // A failed start is tried again by the next caller rather than remembered.
    this.ready.catch(() => (this.ready = null));
    return this.ready;
  }

  /**
   * Enqueues tasks on the caller's connection, inside its transaction (the store calls this
   * from the transaction that adds the frontier entries).
   */
  async enqueueWith(raw: RawSql, tasks: JobTask[]): Promise<void> {
    if (!tasks.length) return;
    await this.open();
    await this.boss.insert(this.copies(tasks), { db: { executeSql: (text: string, values: unknown[]) => raw(text, values) as Promise<{ rows: never[] }> } });
  }

  private copies(tasks: JobTask[]) {
    return tasks.map((t) => ({ name: QUEUE_NAME, data: t, singletonKey: `${t.jobId}|${t.url}`, expireInSeconds: this.recoverySeconds }));
  }

  /** Tasks were already enqueued with their frontier entries (enqueueWith); nothing to do. */
  async push(_tasks: JobTask[]): Promise<void> {}

  async start(handle: (task: JobTask) => Promise<TaskOutcome | void>, concurrency: number): Promise<void> {
    await this.open();
    for (let i = 0; i < concurrency && !this.stopping; i++) {
      await this.boss.work<JobTask>(QUEUE_NAME, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async (jobs) => {
        for (const job of jobs) {
          // A fetch under way as stop() was called still delivers: that task is not even started.
          const outcome = this.stopping ? "handed_back" : await handle(job.data);
          if (outcome !== "handed_back") continue;
          // If this insert fails (the database gone), the handler throws: pg-boss retries the task later.
          await this.boss.insert(this.copies([job.data]));
          this.handedBack++;
        }
      });
    }
  }

  /** Takes no task from now on; resolves once the tasks under way have returned and pg-boss has stopped. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (!this.ready) return;
      await this.ready.catch(() => {});
      await this.boss.stop({ graceful: true, wait: true, timeout: 15_000 });
      if (this.handedBack) this.logger.info({ tasks: this.handedBack }, "job pages not started here handed back to the queue for the other instances");
    })();
    return this.stopping;
  }
}
