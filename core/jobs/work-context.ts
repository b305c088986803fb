/** The engine as one page task sees it (page-work.ts runs tasks against it, discover.ts filters their links). */
import type { Plan } from "../limits/plans.ts";
import type { AllowList } from "../net/allow-list.ts";
import type { Ports } from "../ports.ts";
import type { JobRecord, JobTask, StoppedReason } from "../ports/job-model.ts";
import type { JobQueue, JobStore } from "../ports/jobs.ts";
import type { JobsConfig } from "./config.ts";
import type { Heartbeat } from "./leases.ts";
import type { JobPageReader } from "./page-reader.ts";
import type { Gate, RobotsCache } from "./politeness.ts";
import type { SiteStreaks } from "./site-streaks.ts";
import type { ScopeRules, TrapGuard } from "./url-rules.ts";
import type { Webhooks } from "./webhooks.ts";

/** What a task needs from the engine that runs it. */
export interface WorkContext {
  ports: Ports;
  /** Reads one page as scrape does (handed to the engine: see page-reader.ts). */
  readPage: JobPageReader;
  store: JobStore;
  queue: JobQueue;
  gate: Gate;
  robots: RobotsCache;
  webhooks: Webhooks;
  allow: AllowList;
  leaseMs: number;
  /** Several instances share the queue: a failed task's entry keeps its claim until the lease runs out. */
  readonly shared: boolean;
  /** Keeps a claimed entry's lease (running out at `lease`) alive while its task runs. */
  heartbeat(task: JobTask, lease: number): Heartbeat;
  planOf(job: JobRecord): Promise<Plan>;
  /** The job as the store has it, read at most every 250 ms per process (status and counts may lag that much). */
  job(id: string): Promise<JobRecord | null>;
  rulesOf(job: JobRecord): ScopeRules;
  trapsOf(jobId: string): TrapGuard;
  track(jobId: string, ac: AbortController): () => void;
  /** The task's page request begins: a server that is stopping lets it finish. */
  reading(ac: AbortController): void;
  /** Quota units this process holds for the job's pages under way (reserved, not yet settled). */
  holding(jobId: string): number;
  hold(jobId: string, delta: number): void;
  /** Keeps track of a quota settlement under way (awaited when the engine stops). */
  settling(p: Promise<void>): void;
  stopJob(jobId: string, reason: StoppedReason): Promise<void>;
  complete(jobId: string): Promise<void>;
  /** Refusing answers and failures to reach a host in a row, per job (site-streaks.ts). */
  streaks: SiteStreaks;
  /** What one page may store (QUARRY_JOB_PAGE_BYTES) and the links a crawl takes from it (QUARRY_JOB_PAGE_LINKS). */
  readonly config: { jobs: Pick<JobsConfig, "pageBytes" | "pageLinks"> };
}
