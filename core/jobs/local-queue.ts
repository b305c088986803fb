/**
 * The embedded queue: tasks in process memory, fed from the store. The store holds the truth
 * (every frontier entry and its state), so this queue needs no persistence of its own: on start
 * it takes every unfinished entry of the store's active jobs, and a SIGKILL loses nothing the
 * store had. One server process owns a SQLite file (adapters/shared/server-lock.ts), so no other
 * process takes the same tasks; several instances use a real queue engine instead.
 */
import type { JobQueue, JobStore, TaskOutcome } from "../ports/jobs.ts";
import type { JobTask } from "../ports/job-model.ts";

export class LocalQueue implements JobQueue {
  private readonly tasks: JobTask[] = [];
  private head = 0;
  private running = 0;
  private concurrency = 0;
  // What became of a task is the store's to say: one handed back is read after the next start.
  private handle: ((task: JobTask) => Promise<TaskOutcome | void>) | null = null;
  private idle: Array<() => void> = [];

  constructor(private readonly store: JobStore) {}

  async push(tasks: JobTask[]): Promise<void> {
    for (const t of tasks) this.tasks.push(t);
    this.pump();
  }

  async start(handle: (task: JobTask) => Promise<TaskOutcome | void>, concurrency: number): Promise<void> {
    this.handle = handle;
    this.concurrency = concurrency;
    // Resume: whatever the store has not finished (pending, or in flight when the process died).
    for (let batch = await this.store.unfinished(100_000); batch.length; batch = []) this.tasks.push(...batch);
    this.pump();
  }

  private pump(): void {
    while (this.handle && this.running < this.concurrency && this.head < this.tasks.length) {
      const task = this.tasks[this.head++]!;
      if (this.head > 1024 && this.head * 2 > this.tasks.length) {
        this.tasks.splice(0, this.head);
        this.head = 0;
      }
      this.running++;
      const handle = this.handle;
      void handle(task)
        .catch(() => {})
        .finally(() => {
          this.running--;
          if (this.running === 0) for (const r of this.idle.splice(0)) r();
          this.pump();
        });
    }
  }

  async stop(): Promise<void> {
    this.handle = null;
    if (this.running > 0) await new Promise<void>((r) => this.idle.push(r));
  }

  /** Tasks waiting (not running). */
  get waiting(): number {
    return this.tasks.length - this.head;
  }
}
