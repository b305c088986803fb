/**
 * The embedded queue: tasks in process memory, fed from the store. The store holds the truth
 * (every frontier entry and its state), so this queue needs no persistence of its own: on start
 * it takes every unfinished entry of the store's active jobs, and a SIGKILL loses nothing the
 * store had. One server process owns a SQLite file (adapters/shared/server-lock.ts), so no other
 * process takes the same tasks; several instances use a real queue engine instead.
 *
 * Fair between accounts (issue #28): a worker that frees up takes a task of the account with the
 * fewest tasks running, the one served longest ago among equals; within an account, its jobs take
 * turns; within a job, first in, first out. So one account's backlog (a batch of slow pages) never
 * holds another account's job behind it: the other waits at most for one of its pages to end.
 */
import type { JobQueue, JobStore, TaskOutcome } from "../ports/jobs.ts";
import type { JobTask } from "../ports/job-model.ts";

/** One job's waiting tasks, first in first out. */
class Line {
  tasks: JobTask[] = [];
  head = 0;
  running = 0;
  get size(): number {
    return this.tasks.length - this.head;
  }
  take(): JobTask {
    const task = this.tasks[this.head++]!;
    if (this.head > 1024 && this.head * 2 > this.tasks.length) {
      this.tasks.splice(0, this.head);
      this.head = 0;
    }
    return task;
  }
}

/** One account: its jobs' lines (in turn order: the next to serve first), tasks running, when last served. */
interface Account {
  name: string;
  jobs: Map<string, Line>;
  waiting: number;
  running: number;
  served: number;
}

export class LocalQueue implements JobQueue {
  private readonly accounts = new Map<string, Account>();
  /** Each job's account, known while the job has tasks here. */
  private readonly owner = new Map<string, string>();
  private turn = 0;
  private running = 0;
  private concurrency = 0;
  // What became of a task is the store's to say: one handed back is read after the next start.
  private handle: ((task: JobTask) => Promise<TaskOutcome | void>) | null = null;
  private idle: Array<() => void> = [];

  constructor(private readonly store: JobStore) {}

  async push(tasks: JobTask[]): Promise<void> {
    for (const t of tasks) {
      const account = this.owner.get(t.jobId) ?? (await this.accountOf(t.jobId));
      if (account === null) continue; // the job is gone: nothing to read for it
      let a = this.accounts.get(account);
      if (!a) this.accounts.set(account, (a = { name: account, jobs: new Map(), waiting: 0, running: 0, served: 0 }));
      let line = a.jobs.get(t.jobId);
      if (!line) a.jobs.set(t.jobId, (line = new Line()));
      line.tasks.push(t);
      a.waiting++;
    }
    this.pump();
  }

  /** The job's account, from the store once per job; a store that cannot answer leaves the job its own line. */
  private async accountOf(jobId: string): Promise<string | null> {
    const account = await this.store.get(jobId).then((j) => (j ? j.account : null), () => `\u0000${jobId}`);
    if (account !== null) this.owner.set(jobId, this.owner.get(jobId) ?? account);
    return account === null ? null : this.owner.get(jobId)!;
  }

  async start(handle: (task: JobTask) => Promise<TaskOutcome | void>, concurrency: number): Promise<void> {
    this.handle = handle;
    this.concurrency = concurrency;
    // Resume: whatever the store has not finished (pending, or in flight when the process died).
    await this.push(await this.store.unfinished(100_000));
  }

  /** The account with the fewest tasks running that has one waiting; among equals, the one served longest ago. */
  private next(): Account | null {
    let best: Account | null = null;
    for (const a of this.accounts.values()) {
      if (a.waiting > 0 && (!best || a.running < best.running || (a.running === best.running && a.served < best.served))) best = a;
    }
    return best;
  }

  private pump(): void {
    for (let a = this.next(); this.handle && this.running < this.concurrency && a; a = this.next()) {
      // Its jobs take turns: the first line with a task goes, then to the back.
      const [jobId, line] = [...a.jobs].find(([, l]) => l.size > 0)!;
      const task = line.take();
      a.jobs.delete(jobId);
      a.jobs.set(jobId, line);
      a.waiting--;
      a.running++;
      line.running++;
      a.served = ++this.turn;
      this.running++;
      const handle = this.handle;
      void handle(task)
        .catch(() => {})
        .finally(() => {
          this.running--;
          a.running--;
          line.running--;
          this.forget(a, jobId, line);
          if (this.running === 0) for (const r of this.idle.splice(0)) r();
          this.pump();
        });
    }
  }

  /** A job with nothing waiting or running here leaves its account; an account with no jobs leaves the queue. */
  private forget(a: Account, jobId: string, line: Line): void {
    if (line.size > 0 || line.running > 0 || a.jobs.get(jobId) !== line) return;
    a.jobs.delete(jobId);
    this.owner.delete(jobId);
    if (a.jobs.size === 0 && this.accounts.get(a.name) === a) this.accounts.delete(a.name);
  }

  async stop(): Promise<void> {
    this.handle = null;
    if (this.running > 0) await new Promise<void>((r) => this.idle.push(r));
  }

  /** Tasks waiting (not running). */
  get waiting(): number {
    let n = 0;
    for (const a of this.accounts.values()) n += a.waiting;
    return n;
  }
}
