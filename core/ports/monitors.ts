/** The monitors port (see core/ports.ts, which re-exports it with the others). */
import type { JobKind } from "./job-model.ts";

/**
 * A monitor (issue #31): a saved scrape (one URL, run as a batch job of one) or crawl, run every
 * `intervalMs` with the `changes` format on under its own tag, calling its webhook only when a
 * page is new, changed or removed. Plain data, stored as is by every MonitorStore.
 */
export interface MonitorRecord {
  id: string;
  account: string;
  /** The key that created it: its runs are metered on it, as the crawl or scrape would be. */
  keyId: string;
  name: string | null;
  /** `batch` for a scrape monitor (one URL), `crawl` for a site. */
  kind: JobKind;
  /** The validated request (the crawl's or scrape's body fields), kept to build each run's job. */
  request: Record<string, unknown>;
  intervalMs: number;
  webhook: { url: string; secret: string | null };
  paused: boolean;
  /** Milliseconds since the epoch. */
  createdAt: number;
  updatedAt: number;
  /** When the next run is due (a paused monitor keeps it, and runs at once when resumed past it). */
  nextRunAt: number;
  lastRunAt: number | null;
}

export type RunState = "starting" | "running" | "settling" | "done";

/**
 * What a run came to: `baseline` (the first run: every page recorded, nothing sent), `unchanged`,
 * `changed` (the webhook was sent), `failed` (the job read nothing, or disappeared), `skipped`
 * (the previous run was still going), or a refusal of the job: `quota_exceeded`, `too_many_jobs`,
 * `job_storage_full`, `key_revoked`, `url_not_allowed`.
 */
export type RunOutcome = "baseline" | "unchanged" | "changed" | "failed" | "skipped" | "quota_exceeded" | "too_many_jobs" | "job_storage_full" | "key_revoked" | "url_not_allowed" | "service_unavailable";

export interface MonitorRun {
  id: string;
  monitorId: string;
  account: string;
  state: RunState;
  /** Who holds the run's next step until then (a dead holder's lease runs out and another takes it). */
  leaseUntil: number;
  /** When it was due and when it started. */
  dueAt: number;
  startedAt: number;
  finishedAt: number | null;
  jobId: string | null;
  outcome: RunOutcome | null;
  /** Pages read, and pages new, changed or removed (set when done). */
  pages: number;
  changed: number;
  /** The job's stopped_reason, or why it could not start (a refusal's message). */
  detail: string | null;
}

export interface MonitorPatch {
  name?: string | null;
  intervalMs?: number;
  webhook?: { url: string; secret: string | null };
  paused?: boolean;
  nextRunAt?: number;
}

/**
 * Monitors and their runs, durable (SQLite, PostgreSQL), shared by every instance. Claims are
 * conditional updates, so a due run is started by one instance only, and a run's steps
 * (start its job, settle its outcome) are each taken by one holder at a time under a lease.
 */
export interface MonitorStore {
  /** Stores it only if the account has fewer than `cap` monitors (null: no cap), checked in the same transaction. */
  create(m: MonitorRecord, cap: number | null): Promise<{ created: true } | { created: false; count: number }>;
  get(id: string): Promise<MonitorRecord | null>;
  /** The account's monitors, newest first. */
  list(account: string): Promise<MonitorRecord[]>;
  update(id: string, patch: MonitorPatch, now: number): Promise<MonitorRecord | null>;
  /** Deletes it and its runs; false when it did not exist. */
  delete(id: string): Promise<boolean>;
  /**
   * Claims up to `limit` monitors due at `now` (not paused): each one's next run moves to
   * `now + intervalMs` and a run is stored in state `starting`, held until `leaseUntil`, in one
   * step; a monitor another instance claimed first is not returned. A monitor whose previous run
   * is not done gets a `skipped` run instead (returned with it, already done).
   */
  claimDue(now: number, leaseUntil: number, limit: number, runId: () => string): Promise<MonitorRun[]>;
  /** Runs in `state` whose lease ran out at `now` (a dead holder's, or never held), re-held until `leaseUntil`. */
  claimRuns(state: "starting" | "settling", now: number, leaseUntil: number, limit: number): Promise<MonitorRun[]>;
  /** Runs whose job is under way (state `running`). */
  running(limit: number): Promise<MonitorRun[]>;
  /** Moves a run from `from` to its next state with `patch`; false when it was not in `from` (someone else moved it). */
  advance(id: string, from: RunState, patch: Partial<Pick<MonitorRun, "state" | "leaseUntil" | "jobId" | "outcome" | "pages" | "changed" | "detail" | "finishedAt">>): Promise<boolean>;
  /** A monitor's runs, newest first. */
  runs(monitorId: string, limit: number): Promise<MonitorRun[]>;
}
