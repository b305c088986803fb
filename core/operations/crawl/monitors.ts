/**
 * Monitors (issue #31): a saved scrape or crawl run on a schedule, with the `changes` format on
 * under the monitor's own tag (`monitor:<id>`, apart from the account's other reads). Each run is
 * a crawl or batch job of the job engine, so it is durable, shared among instances and metered
 * as that job would be; when the job ends, the run compares nothing itself: the job's pages
 * already say `new`, `same`, `changed` or `removed`, and the run sends `monitor.changed` through
 * the job's webhook delivery (stored, signed, retried) only when one of them is not `same`.
 *
 * The first run records the baseline and sends nothing (every page is `new` then). Later runs
 * send when a page changed, was removed (404/410), or is new to the monitor (a crawl found it).
 *
 * Schedules live in the store. A tick (every few seconds, and callable by tests) claims due
 * monitors with a conditional update of their next run time (one instance wins), starts each
 * claimed run's job, and settles runs whose job ended. A run's steps are held under a lease: a
 * run whose instance died before recording its job is taken over by another after the lease, and
 * its job, named after the run, is made once (or found, if the dead instance had made it).
 */
import { ApiError, echoed } from "../../errors.ts";
import { monitorRunId, monitorId } from "../../ids.ts";
import type { Caller, JobEngine } from "../../jobs/engine.ts";
import { TERMINAL, type JobRecord, type JobSpec } from "../../ports/job-model.ts";
import type { MonitorRecord, MonitorRun, MonitorStore, RunOutcome } from "../../ports/monitors.ts";
import type { Plan } from "../../limits/plans.ts";
import type { Services } from "../../services.ts";
import { refuseTargets } from "../../schema/targets.ts";
import { readKey } from "../../changes/track.ts";
import { forgetUnreached, READS_SWEEP_MS, sweepReads, tagOf } from "./monitor-reads.ts";
import { batchSpec, crawlSpec, engineOf, jobPath, startJob, type JobCaller } from "./crawl.ts";
import type { MonitorPatchRequest, MonitorRequest } from "./monitor-schema.ts";
import type { BatchRequest, CrawlRequest } from "./schema.ts";
import type { Logger } from "../../ports.ts";

/** How often an instance looks for due monitors and ended runs. */
export const MONITOR_TICK_MS = 5_000;
/** How long an instance holds a run's step before another may take it over (it died). */
export const RUN_LEASE_MS = 60_000;
/** Changed pages listed in one webhook (each with its diff); the rest are counted, and readable in the job. */
export const CHANGED_PAGES_SENT = 100;

const NOT_FOUND = (id: string) => new ApiError("not_found", `No monitor ${echoed(id)}.`);
const UNAVAILABLE = "Monitors need job storage, a store for earlier reads and a monitor store, and this Quarry was embedded without them.";

function storeOf(services: Services, monitors: MonitorStore | undefined): { engine: JobEngine; store: MonitorStore } {
  const engine = engineOf(services);
  if (!monitors || !engine.ports.reads) throw new ApiError("service_unavailable", UNAVAILABLE);
  return { engine, store: monitors };
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function monitorAnswer(m: MonitorRecord) {
  const { diff, ...request } = m.request as Record<string, unknown> & { diff?: boolean };
  return {
    id: m.id, name: m.name, type: m.kind === "crawl" ? "crawl" as const : "scrape" as const, url: String(request.url), interval_seconds: Math.round(m.intervalMs / 1000),
    paused: m.paused, diff: diff !== false, webhook: { url: m.webhook.url }, [m.kind === "crawl" ? "crawl" : "scrape"]: request,
    created_at: iso(m.createdAt)!, updated_at: iso(m.updatedAt)!, next_run_at: iso(m.nextRunAt)!, last_run_at: iso(m.lastRunAt),
  };
}

export function runAnswer(r: MonitorRun) {
  return {
    id: r.id, status: r.state, outcome: r.outcome, job_id: r.jobId, due_at: iso(r.dueAt)!, started_at: iso(r.startedAt)!, finished_at: iso(r.finishedAt),
    pages: r.pages, changed: r.changed, detail: r.detail,
  };
}

/** The caller's monitor, or a 404 that says nothing about other accounts' monitors. */
async function own(store: MonitorStore, caller: Caller, id: string): Promise<MonitorRecord> {
  const m = /^mon_[0-9A-Z]{26}$/.test(id) ? await store.get(id) : null;
  if (!m || m.account !== caller.account) throw NOT_FOUND(id);
  return m;
}

export async function createMonitor(services: Services, monitors: MonitorStore | undefined, caller: JobCaller, body: MonitorRequest) {
  const { engine, store } = storeOf(services, monitors);
  if (!body.scrape === !body.crawl) {
    throw new ApiError("invalid_request", "Give exactly one of scrape (watch one page) or crawl (watch a site).", {
      details: [{ field: body.scrape ? "crawl" : "scrape", message: body.scrape ? "give scrape or crawl, not both" : "give scrape or crawl" }],
    });
  }
  const kind = body.crawl ? "crawl" : "batch";
  const target = (body.crawl ?? body.scrape)!;
  // Refused now rather than on every run: a target or webhook Quarry will not reach, a proxy pool it does not have, options that contradict.
  refuseTargets([{ field: `${body.crawl ? "crawl" : "scrape"}.url`, url: target.url }, { field: "webhook.url", url: body.webhook.url }], { allow: engine.allow });
  const request = { ...target, diff: body.diff };
  await specOf(engine, caller, kind, request, "mon_check", null);
  const now = engine.ports.clock.now();
  const m: MonitorRecord = {
    id: monitorId(now), account: caller.account, keyId: caller.keyId, name: body.name ?? null, kind, request, intervalMs: body.interval_seconds * 1000,
    webhook: { url: body.webhook.url, secret: body.webhook.secret ?? null }, paused: body.paused, createdAt: now, updatedAt: now,
    // The first run (the baseline) is due at once.
    nextRunAt: now, lastRunAt: null,
  };
  const out = await store.create(m, caller.plan.monitors);
  if (!out.created) {
    throw new ApiError("too_many_monitors", `This account has ${out.count} monitors, the most its plan (${caller.plan.id}) allows (monitors: ${caller.plan.monitors}); delete one (DELETE /v1/monitors/{id}) to add another.`);
  }
  return monitorAnswer(m);
}

export async function listMonitors(services: Services, monitors: MonitorStore | undefined, caller: Caller) {
  const { store } = storeOf(services, monitors);
  return { data: (await store.list(caller.account)).map(monitorAnswer) };
}

export async function getMonitor(services: Services, monitors: MonitorStore | undefined, caller: Caller, id: string) {
  const { store } = storeOf(services, monitors);
  return monitorAnswer(await own(store, caller, id));
}

export async function patchMonitor(services: Services, monitors: MonitorStore | undefined, caller: Caller, id: string, body: MonitorPatchRequest) {
  const { engine, store } = storeOf(services, monitors);
  const m = await own(store, caller, id);
  if (body.webhook) refuseTargets([{ field: "webhook.url", url: body.webhook.url }], { allow: engine.allow });
  const now = engine.ports.clock.now();
  const intervalMs = body.interval_seconds === undefined ? undefined : body.interval_seconds * 1000;
  const updated = await store.update(m.id, {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(intervalMs !== undefined ? { intervalMs, nextRunAt: Math.min(m.nextRunAt, (m.lastRunAt ?? now) + intervalMs) } : {}),
    ...(body.webhook ? { webhook: { url: body.webhook.url, secret: body.webhook.secret ?? null } } : {}),
    ...(body.paused !== undefined ? { paused: body.paused } : {}),
  }, now);
  if (!updated) throw NOT_FOUND(id);
  return monitorAnswer(updated);
}

export async function deleteMonitor(services: Services, monitors: MonitorStore | undefined, caller: Caller, id: string) {
  const { engine, store } = storeOf(services, monitors);
  const m = await own(store, caller, id);
  // A run under way stops first: its job would otherwise go on reading, and keep reads under the tag
  // after they are forgotten (its run row goes with the monitor, so it would never be settled).
  for (const r of await store.runs(m.id, 100)) if (r.state !== "done" && r.jobId) await engine.cancel(r.jobId);
  if (!(await store.delete(m.id))) throw NOT_FOUND(id);
  // Its reads were its own (its tag): nothing else compares against them. What a page of a cancelled job
  // still in flight keeps after this is forgotten by the scheduler's sweep (MonitorScheduler.sweep).
  await engine.ports.reads?.forgetTag?.(m.account, tagOf(m.id));
  return { id: m.id, deleted: true as const };
}

export async function monitorRuns(services: Services, monitors: MonitorStore | undefined, caller: Caller, id: string) {
  const { store } = storeOf(services, monitors);
  const m = await own(store, caller, id);
  return { data: (await store.runs(m.id, 100)).map(runAnswer) };
}

/** The job spec of a run: the saved request with `changes` on under the monitor's tag and its webhook sending no job events. */
async function specOf(engine: JobEngine, caller: JobCaller, kind: "crawl" | "batch", request: Record<string, unknown>, id: string, hook: JobSpec["webhook"]): Promise<{ spec: JobSpec; urls: string[] }> {
  const { diff, ...fields } = request as Record<string, unknown> & { diff?: boolean; formats: string[]; url: string };
  const formats = [...new Set([...(fields.formats as string[]), "changes"])];
  const changes_options = { tag: tagOf(id), diff: diff !== false };
  const spec = kind === "crawl"
    ? await crawlSpec(engine, caller, { ...fields, formats, changes_options } as unknown as CrawlRequest)
    : await batchSpec(engine, caller, { ...fields, urls: [fields.url], formats, changes_options } as unknown as BatchRequest);
  return { spec: { ...spec, webhook: hook }, urls: [String(fields.url)] };
}

const REFUSED: ReadonlySet<string> = new Set(["quota_exceeded", "too_many_jobs", "job_storage_full", "url_not_allowed", "service_unavailable"]);
const FOUND: ReadonlySet<string> = new Set(["new", "changed", "removed"]);

export class MonitorScheduler {
  private timer: ReturnType<typeof setInterval> | null = null;
  private ticking: Promise<void> | null = null;
  private stopped = false;
  /** When this instance last swept deleted monitors' reads (0: at its first round). */
  private swept = 0;

  constructor(
    private readonly services: Services,
    private readonly store: MonitorStore,
    private readonly planOf: (account: string, plan: string | undefined) => Plan,
    private readonly logger: Logger,
    private readonly tickMs = MONITOR_TICK_MS,
  ) {}

  private get engine(): JobEngine {
    return this.services.jobs!;
  }

  /** Ticks every `tickMs` (0: only when called); the timer never keeps the process alive. */
  start(): void {
    if (this.stopped || this.timer || this.tickMs <= 0) return;
    this.timer = setInterval(() => void this.tick(), this.tickMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking?.catch(() => {});
  }

  /** One round: start due runs, take over runs a dead instance left, settle runs whose job ended. One at a time in this process. */
  tick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.ticking ??= this.round().catch((err) => this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "monitor round failed; the next one retries")).finally(() => (this.ticking = null));
    return this.ticking;
  }

  private async round(): Promise<void> {
    const now = this.engine.ports.clock.now();
    const lease = now + RUN_LEASE_MS;
    const fresh = await this.store.claimDue(now, lease, 50, () => monitorRunId(now));
    const stale = await this.store.claimRuns("starting", now, lease, 50);
    for (const run of [...fresh.filter((r) => r.state === "starting"), ...stale]) await this.startRun(run);
    for (const run of await this.store.running(500)) {
      const job = run.jobId ? await this.engine.store.get(run.jobId) : null;
      if (job && !TERMINAL.has(job.status)) continue;
      if (await this.store.advance(run.id, "running", { state: "settling", leaseUntil: lease })) await this.settle(run, job);
    }
    for (const run of await this.store.claimRuns("settling", now, lease, 50)) await this.settle(run, run.jobId ? await this.engine.store.get(run.jobId) : null);
    if (this.swept === 0 || now - this.swept >= READS_SWEEP_MS) {
      this.swept = now || 1;
      await this.sweep();
    }
  }

  /** Forgets the reads of monitors that no longer exist (monitor-reads.ts); how many. */
  sweep(): Promise<number> {
    return sweepReads(this.engine.ports.reads, async (id) => (await this.store.get(id)) !== null);
  }

  private async finish(run: MonitorRun, from: "starting" | "settling", outcome: RunOutcome, patch: { pages?: number; changed?: number; detail?: string | null } = {}): Promise<void> {
    await this.store.advance(run.id, from, { state: "done", outcome, finishedAt: this.engine.ports.clock.now(), leaseUntil: 0, ...patch });
  }

  private async startRun(run: MonitorRun): Promise<void> {
    const m = await this.store.get(run.monitorId);
    if (!m) return this.finish(run, "starting", "failed", { detail: "the monitor was deleted" });
    const key = await this.engine.ports.keys.getKey(m.keyId);
    if (!key || key.revoked_at) return this.finish(run, "starting", "key_revoked", { detail: "the key that created the monitor was revoked: its runs are metered on it; create the monitor again with a live key" });
    // The job is named after the run: one its last holder made before dying is taken, not made again.
    const jobId = `${m.kind}_${run.id.slice("run_".length)}`;
    const made = await this.engine.store.get(jobId);
    if (made) {
      await this.store.advance(run.id, "starting", { state: "running", jobId, leaseUntil: 0 });
      return;
    }
    const plan = this.planOf(m.account, (await this.engine.ports.keys.getAccount(m.account))?.plan);
    const caller: JobCaller = { account: m.account, keyId: m.keyId, plan };
    let job: JobRecord;
    try {
      const { spec, urls } = await specOf(this.engine, caller, m.kind, m.request, m.id, { url: m.webhook.url, secret: m.webhook.secret, events: [] });
      job = await startJob(this.engine, caller, m.kind, spec, urls, jobId);
    } catch (err) {
      if (err instanceof ApiError && REFUSED.has(err.code)) return this.finish(run, "starting", err.code as RunOutcome, { detail: err.message });
      if (err instanceof ApiError) return this.finish(run, "starting", "failed", { detail: err.message });
      throw err; // the store failed: the run stays starting, and is taken again when its lease runs out
    }
    if (!(await this.store.advance(run.id, "starting", { state: "running", jobId: job.id, leaseUntil: 0 }))) {
      // Another instance took the run over meanwhile (this one was too slow): its job stands, this one goes.
      await this.engine.cancel(job.id);
    }
  }

  private async settle(run: MonitorRun, job: JobRecord | null): Promise<void> {
    const now = this.engine.ports.clock.now();
    if (!job) return this.finish(run, "settling", "failed", { detail: "its job expired before the run was settled" });
    const m = await this.store.get(run.monitorId);
    if (!m) return this.finish(run, "settling", "failed", { detail: "the monitor was deleted" });
    const changed: Array<Record<string, unknown>> = [];
    let pages = 0;
    let compared = 0; // pages with a `changes` answer: read, or gone (404/410)
    const reached = new Set<string>(); // the read keys of every page the job recorded, read or failed
    for (let offset = 0; ; offset += 100) {
      const slice = await this.engine.store.pages(job.id, offset, 100);
      pages += slice.length;
      for (const p of slice) {
        reached.add(readKey(p.url));
        const c = (p.data as { changes?: { change_status: string; previous_read_at: string | null; visibility: string; diff?: string | null } | null }).changes;
        if (c) compared++;
        if (c && FOUND.has(c.change_status)) {
          changed.push({ url: p.url, status_code: p.statusCode, title: p.title, change_status: c.change_status, previous_read_at: c.previous_read_at, visibility: c.visibility, ...(c.diff !== undefined ? { diff: c.diff } : {}) });
        }
      }
      if (slice.length < 100) break;
    }
    const detail = job.stoppedReason;
    await forgetUnreached(this.engine.ports.reads, m, job, reached);
    // Nothing compared: no page answered (a 404 page did: it is `removed`, which is news).
    if (compared === 0) {
      return this.finish(run, "settling", job.stoppedReason === "quota_exceeded" ? "quota_exceeded" : "failed", { pages, detail: detail ?? "no page could be read" });
    }
    const earlier = (await this.store.runs(m.id, 100)).some((r) => r.id !== run.id && (r.outcome === "baseline" || r.outcome === "unchanged" || r.outcome === "changed"));
    if (!earlier) return this.finish(run, "settling", "baseline", { pages, changed: changed.length, detail });
    if (!changed.length) return this.finish(run, "settling", "unchanged", { pages, detail });
    await this.engine.webhooks.send(job, "monitor.changed", run.id, {
      monitor_id: m.id, run_id: run.id, job_id: job.id, job_url: jobPath(job.kind, job.id), type: m.kind === "crawl" ? "crawl" : "scrape", url: String(m.request.url),
      pages, changed_count: changed.length, stopped_reason: job.stoppedReason, changed: changed.slice(0, CHANGED_PAGES_SENT),
    }, now, m.id);
    return this.finish(run, "settling", "changed", { pages, changed: changed.length, detail });
  }
}
