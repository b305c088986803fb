/** The job ports (see core/ports.ts, which re-exports them with the others). */
import type { FinishResult, JobKind, JobRecord, JobStatus, JobTask, PageResult, SkippedUrl, StoredPage } from "./job-model.ts";

/**
 * Site-level jobs (api.md §9): the jobs, their frontiers and the pages read, in the store, so a
 * restarted server resumes them. Every change of a frontier entry is conditional on its state,
 * so two workers (or two instances) given the same task record it once.
 */
export interface JobStore {
  /**
   * Stores a new job with its first frontier entries and the URLs it skipped at once. With
   * `limits`, only if its account is within them, checked in the same transaction (exact, also
   * for several instances creating jobs for one account at once); otherwise nothing is stored.
   */
  create(job: JobRecord, seeds: JobTask[], skipped: SkippedUrl[], limits?: AccountLimits): Promise<CreateOutcome>;
  get(id: string): Promise<JobRecord | null>;
  /** Takes a pending entry, or an active one whose lease ran out; false when it is done or held. */
  claim(task: JobTask, now: number, leaseMs: number): Promise<boolean>;
  /**
   * Several instances: claims, for a worker that is free, the pending entry the fair order puts
   * first, whichever task the queue handed that worker (issue #28): of the accounts with a pending
   * entry in an active job, the one with the fewest entries claimed now, then the one served
   * longest ago; of its jobs, the one served longest ago; of that job's entries, a shallowest one.
   * The order is the store's, so it holds for every instance together. Null when none is pending.
   */
  claimNext(now: number, leaseMs: number): Promise<JobTask | null>;
  /** Gives a claimed entry back (its work was abandoned: the process is stopping). */
  release(task: JobTask): Promise<void>;
  /**
   * In one transaction: records the page (only if its entry is not finished and the job is
   * queued or running), adds the URLs found (new ones only, up to the job's limit) and the
   * skipped ones, and updates the job's counts.
   */
  finish(task: JobTask, page: PageResult, found: JobTask[], skipped: SkippedUrl[], now: number, opts?: FinishOptions): Promise<FinishResult>;
  /** Moves the job from one of `from` to `to`; false when it was in none of them. */
  transition(
    id: string,
    from: JobStatus[],
    to: JobStatus,
    patch: { finishedAt?: number; expiresAt?: number; stoppedReason?: string | null },
  ): Promise<boolean>;
  /** Recorded pages in the order they were recorded, from `offset`; `withData: false` leaves out what was read (`data` is `{}`). */
  pages(id: string, offset: number, limit: number, withData?: boolean): Promise<StoredPage[]>;
  skippedUrls(id: string, limit: number): Promise<SkippedUrl[]>;
  /** Frontier entries of queued or running jobs not yet finished (resume after a restart). */
  unfinished(limit: number): Promise<JobTask[]>;
  /** Ids of queued and running jobs. */
  active(): Promise<string[]>;
  /**
   * Every account's jobs, for the operator (`quarry jobs list`): newest first (by creation, then id),
   * of `account` and in one of `statuses` when given, at most `limit`.
   */
  list(filter: JobFilter, limit: number): Promise<ListedJob[]>;
  /**
   * How many jobs are queued and running, by kind and status (only combinations with a job are
   * listed), for GET /metrics: one cheap query, whichever instance asks. Optional: a store
   * without it leaves the gauge out.
   */
  activeCounts?(): Promise<Array<{ kind: JobKind; status: "queued" | "running"; jobs: number }>>;
  /**
   * Disk use for GET /metrics (issue #28): the whole database's size where the store can tell
   * (SQLite: its pages; PostgreSQL: pg_database_size), null otherwise; and the bytes the jobs kept
   * now hold (pages as stored, URLs found), every account together. Optional.
   */
  diskUsage?(): Promise<{ database: number | null; jobs: number }>;
  /** Deletes jobs (and their pages) whose expiry passed; returns how many. */
  purge(now: number): Promise<number>;

  // Several instances (QUARRY_JOB_RECOVERY): what a dead instance held comes back when its lease runs out.

  /**
   * A live worker's heartbeat: extends to `until` the lease of each entry it still holds, known by
   * the lease it holds it under (`lease`: claim's `now + leaseMs`, or the last renewal's `until`).
   * Returns, per entry, whether it was still held: false when its lease ran out and the entry went
   * back to the queue (and maybe to another worker).
   */
  renew(held: Array<{ task: JobTask; lease: number }>, until: number): Promise<boolean[]>;
  /**
   * Entries of active jobs left active past their lease (their worker died) go back to pending
   * and are returned (and enqueued with them, when the store shares the queue's database).
   */
  requeueExpired(now: number, limit: number): Promise<JobTask[]>;
  /**
   * One of `slots` request slots on `host`, for every instance together, held by `holder` until
   * `now + leaseMs` (renewable), and only once `delayMs` has passed since the last slot on the host
   * was taken (Crawl-delay). Returns 0 when taken; -1 when every slot is held (ask again soon);
   * else the milliseconds until the Crawl-delay allows the next start.
   */
  takeHostSlot(host: string, holder: string, slots: number, delayMs: number, now: number, leaseMs: number): Promise<number>;
  renewHostSlots(holders: string[], until: number): Promise<void>;
  releaseHostSlot(holder: string): Promise<void>;

  // Webhook deliveries waiting (for their first attempt or a retry), so a restart delivers them.

  /** Stores a delivery, claimed by the caller until `leaseUntil` for its first attempt. */
  addDelivery(d: Delivery, leaseUntil: number): Promise<void>;
  /** Claims deliveries due at `now` that no one holds (a dead holder's lease ran out). */
  claimDeliveries(now: number, leaseUntil: number, limit: number): Promise<Delivery[]>;
  /** Gone without being counted (its job was deleted). */
  dropDelivery(id: string): Promise<void>;
  /**
   * Attempt `attempt` failed with `failure`, which becomes its job's last webhook error (unless a
   * later one is already recorded); the next attempt is due at `nextAt`, by anyone.
   */
  retryDelivery(id: string, attempt: number, nextAt: number, failure: WebhookFailure): Promise<void>;
  /**
   * Delivered (`failure` null), or given up after its last attempt failed with `failure` (which
   * becomes its job's last webhook error): gone, and counted on its job's tally. Counted once
   * however many holders end it; a delivery no longer stored changes nothing.
   */
  endDelivery(id: string, failure: WebhookFailure | null): Promise<void>;
  /** When the next waiting delivery is due; null when none waits. */
  nextDeliveryAt(): Promise<number | null>;
  /** What became of a job's deliveries; all zero and no error for a job that made none. */
  webhookTally(jobId: string): Promise<WebhookTally>;
}

/**
 * What recording a page may store, and what its caps left out (issue #28). With `accountBytes`, a
 * page that would take the account's jobs past it is stored without its content, as failed with
 * `storage_full`, adds nothing it found, and the result says `full`. At most `skippedUrls` skipped
 * URLs are listed per job; the rest are counted in its `dropped.skippedUrls`. `droppedLinks` and
 * `cutBytes` (what the page's caps left out before) are added to the job's `dropped`.
 */
export interface FinishOptions {
  accountBytes: number | null;
  skippedUrls: number;
  droppedLinks: number;
  cutBytes: number;
}

/** An account's job limits (its plan's `jobs_concurrent` and `jobs_storage_bytes`). */
export interface AccountLimits {
  /** Jobs it may have queued or running at once, the new one included. */
  jobs: number;
  /** Bytes its jobs may hold (pages, URLs found); null = no cap. */
  bytes: number | null;
  /** Room a new job needs under `bytes` to start: one page at the per-page cap (default 0). */
  room?: number;
}

/** Stored, or refused: too many jobs active (`active` of them), or the account's job storage full (`bytes` held; room again at `freesAt`, its first kept job's expiry, if any). */
export type CreateOutcome =
  | { created: true }
  | { created: false; reason: "too_many_jobs"; active: number }
  | { created: false; reason: "storage_full"; bytes: number; freesAt: number | null };

export interface JobFilter {
  account?: string;
  statuses?: JobStatus[];
}

/**
 * A listed job and the first, in sorted order, of the URLs it started from and did not skip: a
 * crawl's start URL, one of a batch's URLs; null when it skipped them all.
 */
export interface ListedJob extends JobRecord {
  firstUrl: string | null;
}

/** A failed delivery attempt, as the job's status shows it (never the URL's secret or the receiver's body). */
export interface WebhookFailure {
  event: string;
  /** Milliseconds since the epoch. */
  at: number;
  /** A short code: `http_<status>` for a receiver's non-2xx answer, else the fetch's error code (`timeout`, `url_not_allowed`, `upstream_error`, …). */
  error: string;
}

/** A job's webhook deliveries: made, waiting (for a first attempt or a retry), given up; and the last failed attempt. */
export interface WebhookTally {
  delivered: number;
  pending: number;
  failed: number;
  lastError: WebhookFailure | null;
}

/** One webhook event to deliver to its job's webhook (the URL and secret are read from the job). */
export interface Delivery {
  id: string;
  jobId: string;
  event: string;
  body: string;
  /** Attempts made so far. */
  attempt: number;
  nextAt: number;
}

/**
 * Hands frontier entries to workers. Embedded: an in-process queue fed from the store (see
 * core/jobs/local-queue.ts). Scaled: an existing queue engine shared by every instance.
 */
export interface JobQueue {
  push(tasks: JobTask[]): Promise<void>;
  /** Starts calling `handle`, at most `concurrency` tasks at once in this process. */
  start(handle: (task: JobTask) => Promise<TaskOutcome | void>, concurrency: number): Promise<void>;
  /** Stops taking tasks at once; resolves when the running ones have returned. Called again, the same wait. */
  stop(): Promise<void>;
}

/**
 * How a task ended, for the queue. "handed_back": this process is stopping and did not read the
 * page (it never claimed the entry, or gave its claim back); a shared queue hands the task to
 * another worker at once, the in-process queue leaves it to the store for the next start.
 * Otherwise the task is done with (its page recorded, or nothing left to do).
 */
export type TaskOutcome = "worked" | "handed_back";
