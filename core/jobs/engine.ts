/**
 * The job engine: creates jobs, hands their tasks to the queue, runs tasks (page-work.ts), and
 * makes sure every job ends. A job ends when its last frontier entry is recorded, when it is
 * cancelled, or when it stops early (limit, quota, deadline, the site refusing or unreachable). A watchdog
 * (every 2 s) ends jobs past their deadline and jobs whose last page was recorded by a process
 * that died before it could say so, stops this process's tasks of jobs ended elsewhere, and deletes expired jobs.
 */
import { jobId as newJobId } from "../ids.ts";
import { accountPlans, type AccountPlans, type Plan, type PlanTable } from "../limits/plans.ts";
import { parseAllowList, type AllowList } from "../net/allow-list.ts";
import { checkUrl } from "../net/url-policy.ts";
import type { Ports } from "../ports.ts";
import type { JobsConfig } from "./config.ts";
import { JobChanges } from "./changes.ts";
import { LeaseKeeper, type Heartbeat } from "./leases.ts";
import { LocalQueue } from "./local-queue.ts";
import type { FinalStatus, JobKind, JobRecord, JobSpec, JobStatus, JobTask, SkippedUrl, StoppedReason } from "../ports/job-model.ts";
import { runNext, runTask } from "./page-work.ts";
import { QuotaHolds, RunningTasks } from "./running.ts";
import { SiteStreaks, SITE_STOPS } from "./site-streaks.ts";
import { TaskRetries } from "./retries.ts";
import { HostGate, RobotsCache, SharedHostGate, type Gate } from "./politeness.ts";
import type { JobQueue, JobStore, TaskOutcome } from "../ports/jobs.ts";
import { JobRefused, type AccountLimits } from "./sizes.ts";
import { frontierKey, scopeRules, TrapGuard, type ScopeRules } from "./url-rules.ts";
import { Webhooks, type WebhookOptions } from "./webhooks.ts";
import type { WorkContext } from "./work-context.ts";

export interface EngineOptions {
  webhooks?: WebhookOptions;
  /** One process: how long a claimed frontier entry stays claimed (longer than any page fetch). Shared queue: QUARRY_JOB_RECOVERY, renewed. */
  leaseMs?: number;
  watchdogMs?: number;
  accountPlans?: AccountPlans; // the server's, shared with the gateway: an undefined plan is logged once
}

export type Caller = { account: string; keyId: string };

const ACTIVE: JobStatus[] = ["queued", "running"];

export class JobEngine implements WorkContext {
  readonly store: JobStore;
  readonly queue: JobQueue;
  readonly gate: Gate;
  readonly robots: RobotsCache;
  readonly webhooks: Webhooks;
  readonly allow: AllowList;
  readonly leaseMs: number;
  readonly changes = new JobChanges(); // wakes a job's SSE streams in this process when it ends
  private readonly leases: LeaseKeeper;
  private readonly retries: TaskRetries;
  readonly streaks = new SiteStreaks();
  private readonly traps = new Map<string, TrapGuard>();
  private readonly rules = new Map<string, ScopeRules>();
  private readonly plans = new Map<string, { plan: Plan; at: number }>();
  private readonly planOfAccount: AccountPlans;
  readonly running = new RunningTasks(); // its size: the tasks this process works on now (GET /metrics)
  private timer: ReturnType<typeof setTimeout> | null = null;
  private started = false;
  private stopped = false;
  private nextPurge = 0;

  constructor(
    readonly ports: Ports,
    readonly config: { plans: PlanTable; egressAllow: string[]; jobs: JobsConfig },
    readonly readPage: WorkContext["readPage"], // core/pages' readJobPage, handed in by services.ts: the engine imports no operation
    private readonly options: EngineOptions = {},
  ) {
    if (!ports.jobs) throw new Error("JobEngine needs ports.jobs");
    this.store = ports.jobs.store;
    this.queue = ports.jobs.queue ?? new LocalQueue(this.store);
    const now = () => ports.clock.now();
    // Several instances: leases as short as QUARRY_JOB_RECOVERY, renewed while held, so a dead instance's work comes back soon.
    this.leaseMs = this.shared ? config.jobs.recoveryMs : (options.leaseMs ?? 120_000);
    this.gate = this.shared && config.jobs.hostConcurrency > 0
      ? new SharedHostGate(this.store, config.jobs.hostConcurrency, this.leaseMs, now)
      : new HostGate(config.jobs.hostConcurrency, now);
    this.robots = new RobotsCache(ports.pages, now, () => this.streaks.begin());
    this.webhooks = new Webhooks(this.store, ports.pages, ports.logger, now, { leaseMs: this.shared ? this.leaseMs : 60_000, ...options.webhooks }, ports.metrics);
    this.allow = parseAllowList(config.egressAllow);
    this.leases = new LeaseKeeper(this.store, this.leaseMs, now, this.shared);
    this.retries = new TaskRetries(ports.logger, now, this.shared ? null : (task) => void this.queue.push([task]));
    this.planOfAccount = options.accountPlans ?? accountPlans(config.plans, (message, fields) => ports.logger.warn(fields, message));
  }

  /** Keeps a claimed entry's lease alive while its task runs (shared queue only). */
  heartbeat(task: JobTask, lease: number): Heartbeat {
    return this.leases.heartbeat(task, lease);
  }

  /**
   * Server stopping: no task or waiting webhook delivery is taken and no page request starts from now
   * on. Tasks not yet reading their page (waiting for a claim, robots.txt, quota or their host's turn)
   * give it back: another instance takes it at once, or one process reads it after its restart.
   * Requests under way finish and are recorded (stop() cuts those still going 10 s after the pause).
   */
  pause(): void {
    if (this.stopped || this.running.paused) return;
    this.running.pause("shutting down", this.ports.clock.now());
    this.webhooks.pause();
    void this.queue.stop();
  }

  /** Starts the workers (resuming unfinished jobs) and the watchdog; idempotent. */
  async start(): Promise<void> {
    if (this.started || this.stopped || this.running.paused) return;
    this.started = true;
    await this.queue.start((task) => this.run(task), this.config.jobs.concurrency);
    // Deliveries a killed process left waiting.
    await this.webhooks.poll();
    if ((await this.watch()) || this.shared) this.schedule();
  }

  private async run(task: JobTask): Promise<TaskOutcome> {
    if (this.stopped || this.running.paused) return "handed_back";
    const end = await (this.shared ? runNext(this) : runTask(this, task)).catch((err) => {
      this.retries.failed(task, err);
      throw err;
    });
    this.retries.succeeded(task);
    return end === "released" && (this.running.paused || this.stopped) ? "handed_back" : "worked";
  }

  /**
   * The watchdog runs while there is something to watch: with the in-process queue it stops when no job
   * is active (an idle embedded app holds no timer, so a script that created it can exit) and `create`
   * wakes it; with a shared queue it keeps running, since another instance's jobs may need it. Where the
   * runtime's timers can be unreferenced, they are, so it never keeps a process alive by itself.
   */
  private schedule(): void {
    if (this.stopped || this.timer) return;
    const timer = setTimeout(() => {
      this.timer = null;
      void this.watch().then((active) => {
        if (active || this.shared) this.schedule();
      });
    }, this.options.watchdogMs ?? 2000);
    (timer as { unref?: () => void }).unref?.();
    this.timer = timer;
  }

  get shared(): boolean { return this.ports.jobs?.queue !== undefined; }

  /** One watchdog round; true when jobs are still active. */
  private async watch(): Promise<boolean> {
    let active = true;
    try {
      const now = this.ports.clock.now();
      const ids = await this.store.active();
      active = ids.length > 0;
      if (this.shared && !this.running.paused) {
        // Entries claimed by an instance that died (its lease ran out) go back to the queue.
        const lost = await this.store.requeueExpired(now, 1000);
        if (lost.length) {
          this.ports.logger.warn({ tasks: lost.length }, "job pages whose claim ran out (an instance stopped, or their task failed) handed back to the queue");
          await this.queue.push(lost);
        }
        await this.webhooks.poll();
      }
      // Ended elsewhere (cancelled by another instance or the CLI): its requests here stop too, as on this process's own cancel.
      for (const id of await this.running.abortEnded(ids, async (j) => !ACTIVE.includes((await this.store.get(j))?.status ?? "cancelled"))) this.forget(id);
      for (const id of ids) {
        const job = await this.store.get(id);
        if (!job) continue;
        if (now >= job.deadlineAt) await this.stopJob(id, "deadline");
        else if (job.discovered <= job.completed + job.failed) await this.complete(id);
      }
      if (now >= this.nextPurge) {
        this.nextPurge = now + 60_000;
        await this.store.purge(now);
      }
      this.retries.watchWorked();
    } catch (err) {
      if (!this.stopped) this.retries.watchFailed(err); // stopping closes the store under it
    }
    return active;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running.stop(this.queue.stop(), this.ports.clock.now());
    this.leases.stop();
    this.retries.stop();
    await Promise.allSettled([...this.settlements, this.gate.settled?.()]);
    await this.webhooks.stop();
  }

  /** Creates a job: its seeds are the start URL (crawl) or the URLs (batch); private ones are skipped and reported. Throws JobRefused past the account's `limits`. */
  async create(caller: Caller, kind: JobKind, spec: JobSpec, urls: string[], limits?: AccountLimits, givenId?: string): Promise<JobRecord> {
    const now = this.ports.clock.now();
    // A monitor's run names its job after itself, so a run taken over after its holder died finds the job that holder made.
    const id = givenId ?? newJobId(kind, now);
    const [seeds, skipped]: [JobTask[], SkippedUrl[]] = [[], []];
    const seen = new Set<string>();
    for (const raw of urls) {
      const url = frontierKey(raw) ?? raw;
      if (seen.has(url)) continue;
      seen.add(url);
      if (!checkUrl(url, this.allow).ok) skipped.push({ url, reason: "url_not_allowed" });
      else seeds.push({ jobId: id, url, depth: 0 });
    }
    const job: JobRecord = {
      id, kind, account: caller.account, keyId: caller.keyId, status: "queued", createdAt: now, finishedAt: null,
      deadlineAt: now + this.config.jobs.deadlineMs, expiresAt: null, discovered: seeds.length, completed: 0, failed: 0,
      skipped: skipped.length, stoppedReason: null, spec,
    };
    JobRefused.unless(await this.store.create(job, seeds, skipped, limits));
    if (seeds.length) this.ports.extract?.warm?.(); // its start overlaps robots.txt and the first fetch
    this.schedule();
    this.webhooks.emit(job, "started", { url: spec.url, discovered: seeds.length }, now);
    if (seeds.length) await this.queue.push(seeds);
    else await this.complete(id);
    return (await this.store.get(id)) ?? job;
  }

  /** Cancels a queued or running job; null when it does not exist. */
  async cancel(id: string): Promise<JobRecord | null> {
    await this.stopJob(id, "cancelled");
    return this.store.get(id);
  }

  /** Ends a job whose frontier is done: completed, or failed when no page could be read. */
  async complete(id: string): Promise<void> {
    const job = await this.store.get(id);
    if (!job || !ACTIVE.includes(job.status) || job.discovered > job.completed + job.failed) return;
    const failed = job.completed === 0 && (job.failed > 0 || job.skipped > 0);
    await this.end(job, failed ? "failed" : "completed", job.stoppedReason);
  }

  /** Stops a job early; what it has read stays. */
  async stopJob(id: string, reason: StoppedReason): Promise<void> {
    const job = await this.store.get(id);
    if (!job || !ACTIVE.includes(job.status)) return;
    const status: FinalStatus = reason === "cancelled" ? "cancelled" : (SITE_STOPS.has(reason) || reason === "storage_full") && job.completed === 0 ? "failed" : "completed";
    await this.end(job, status, reason);
    this.running.abort(`job ${reason}`, id);
  }

  private async end(job: JobRecord, status: FinalStatus, reason: string | null): Promise<void> {
    const now = this.ports.clock.now();
    const ok = await this.store.transition(job.id, ACTIVE, status, { finishedAt: now, expiresAt: now + this.config.jobs.ttlMs, stoppedReason: reason });
    if (!ok) return;
    this.forget(job.id);
    this.changes.changed(job.id);
    this.ports.metrics?.jobFinished?.(job.kind, status, reason ?? "none");
    const after = (await this.store.get(job.id)) ?? job;
    this.webhooks.emit(after, status, { status, stopped_reason: reason, discovered: after.discovered, completed: after.completed, failed: after.failed }, now);
  }

  private forget(id: string): void {
    for (const held of [this.recent, this.traps, this.rules, this.plans]) held.delete(id);
    this.streaks.forget(id);
  }

  private readonly recent = new Map<string, { at: number; job: Promise<JobRecord | null> }>();

  job(id: string): Promise<JobRecord | null> {
    const now = this.ports.clock.now();
    const hit = this.recent.get(id);
    if (hit && now - hit.at < 250) return hit.job;
    if (this.recent.size > 1000) this.recent.clear();
    const job = this.store.get(id);
    this.recent.set(id, { at: now, job });
    job.catch(() => this.recent.delete(id));
    return job;
  }

  async planOf(job: JobRecord): Promise<Plan> {
    const now = this.ports.clock.now();
    const hit = this.plans.get(job.id);
    if (hit && now - hit.at < 30_000) return hit.plan;
    const plan = this.planOfAccount(job.account, (await this.ports.keys.getAccount(job.account))?.plan);
    this.plans.set(job.id, { plan, at: now });
    return plan;
  }

  rulesOf = (job: JobRecord): ScopeRules => this.rules.get(job.id) ?? this.rules.set(job.id, scopeRules(job.spec)).get(job.id)!;
  trapsOf = (jobId: string): TrapGuard => this.traps.get(jobId) ?? this.traps.set(jobId, new TrapGuard()).get(jobId)!;

  private readonly held = new QuotaHolds();
  private readonly settlements = new Set<Promise<void>>();

  settling(p: Promise<void>): void {
    this.settlements.add(p);
    void p.finally(() => this.settlements.delete(p));
  }

  holding = (jobId: string): number => this.held.of(jobId);
  hold = (jobId: string, delta: number): void => this.held.add(jobId, delta);

  track = (jobId: string, ac: AbortController): (() => void) => this.running.track(jobId, ac);
  reading = (ac: AbortController): void => this.running.reading(ac);
}

