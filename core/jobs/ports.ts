/** The job ports (see core/ports.ts, which re-exports them with the others). */
import type { FinishResult, JobRecord, JobStatus, JobTask, PageResult, SkippedUrl, StoredPage } from "./model.ts";

/**
 * Site-level jobs (api.md §9): the jobs, their frontiers and the pages read, in the store, so a
 * restarted server resumes them. Every change of a frontier entry is conditional on its state,
 * so two workers (or two instances) given the same task record it once.
 */
export interface JobStore {
  /** Stores a new job with its first frontier entries and the URLs it skipped at once. */
  create(job: JobRecord, seeds: JobTask[], skipped: SkippedUrl[]): Promise<void>;
  get(id: string): Promise<JobRecord | null>;
  /** Takes a pending entry, or an active one whose lease ran out; false when it is done or held. */
  claim(task: JobTask, now: number, leaseMs: number): Promise<boolean>;
  /** Gives a claimed entry back (its work was abandoned: the process is stopping). */
  release(task: JobTask): Promise<void>;
  /**
   * In one transaction: records the page (only if its entry is not finished and the job is
   * queued or running), adds the URLs found (new ones only, up to the job's limit) and the
   * skipped ones, and updates the job's counts.
   */
  finish(task: JobTask, page: PageResult, found: JobTask[], skipped: SkippedUrl[], now: number): Promise<FinishResult>;
  /** Moves the job from one of `from` to `to`; false when it was in none of them. */
  transition(
    id: string,
    from: JobStatus[],
    to: JobStatus,
    patch: { finishedAt?: number; expiresAt?: number; stoppedReason?: string | null },
  ): Promise<boolean>;
  /** Recorded pages in the order they were recorded, from `offset`. */
  pages(id: string, offset: number, limit: number): Promise<StoredPage[]>;
  skippedUrls(id: string, limit: number): Promise<SkippedUrl[]>;
  /** Frontier entries of queued or running jobs not yet finished (resume after a restart). */
  unfinished(limit: number): Promise<JobTask[]>;
  /** Ids of queued and running jobs. */
  active(): Promise<string[]>;
  /** Deletes jobs (and their pages) whose expiry passed; returns how many. */
  purge(now: number): Promise<number>;
}

/**
 * Hands frontier entries to workers. Embedded: an in-process queue fed from the store (see
 * core/jobs/local-queue.ts). Scaled: an existing queue engine shared by every instance.
 */
export interface JobQueue {
  push(tasks: JobTask[]): Promise<void>;
  /** Starts calling `handle`, at most `concurrency` tasks at once in this process. */
  start(handle: (task: JobTask) => Promise<void>, concurrency: number): Promise<void>;
  /** Stops taking tasks; resolves when the running ones have returned. */
  stop(): Promise<void>;
}

