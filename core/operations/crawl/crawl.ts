/**
 * The site-level job operations (api.md §9), callable from core without HTTP (the MCP and
 * compatibility layers map onto these): start a crawl or a batch, read a job, cancel it. A job
 * belongs to the account that started it; to any other account it does not exist (404).
 */
import { missing, unavailable } from "../../collections/service.ts";
import { ApiError, echoed } from "../../errors.ts";
import type { Caller, JobEngine } from "../../jobs/engine.ts";
import { JobRefused } from "../../jobs/sizes.ts";
import type { AccountLimits } from "../../ports/jobs.ts";
import type { JobKind, JobRecord, JobSpec } from "../../ports/job-model.ts";
import { periodOf, periodResetAt } from "../../limits/period.ts";
import { sizeText, type Plan } from "../../limits/plans.ts";
import type { Services } from "../../services.ts";
import { needsBrowser } from "../../pages/read-page.ts";
import { NEEDS_BROWSER, waitOutlastsTimeout } from "../../schema/render-fields.ts";
import { checkProxyChoice } from "../../pages/escalate.ts";
import type { BatchRequest, CrawlRequest } from "./schema.ts";
import { refuseTargets, type Target } from "../../schema/targets.ts";

export const PAGE_SLICE = 100;

export type { Caller };
export interface JobCaller extends Caller {
  plan: Plan;
}

const NO_JOBS = "Crawl and batch jobs need job storage, and this Quarry was embedded without it (Ports.jobs).";

function engineOf(services: Services): JobEngine {
  if (!services.jobs) throw new ApiError("service_unavailable", NO_JOBS);
  return services.jobs;
}

/** The job's collection, which must exist: its pages are indexed from their markdown, so that is read too. */
async function collectionOf(engine: JobEngine, caller: JobCaller, body: CrawlRequest | BatchRequest): Promise<Partial<JobSpec>> {
  if (!body.collection) return {};
  const store = engine.ports.collections;
  if (!store) throw unavailable();
  if (!(await store.get(caller.account, body.collection))) throw missing(body.collection);
  return { collection: body.collection, formats: body.formats.includes("markdown") ? body.formats : [...body.formats, "markdown"] };
}

export function jobPath(kind: JobKind, id: string): string {
  return kind === "crawl" ? `/v1/crawl/${id}` : `/v1/batch/scrape/${id}`;
}

/**
 * Refuses, before a job exists, the URLs it could never reach (api.md §4, as scrape does, and
 * first, as scrape does): a crawl's start and a webhook by every check that needs no DNS; a
 * batch's entries only by scheme (a private entry is skipped and listed, and the rest is read).
 */
function refuseUnreachable(engine: JobEngine, targets: Target[], webhook: CrawlRequest["webhook"], schemeOnly: boolean): void {
  refuseTargets(targets, { allow: engine.allow, schemeOnly });
  if (webhook) refuseTargets([{ field: "webhook.url", url: webhook.url }], { allow: engine.allow });
}

async function checkQuota(engine: JobEngine, caller: JobCaller): Promise<void> {
  const { quota } = caller.plan;
  if (quota !== null) {
    const now = engine.ports.clock.now();
    const { used } = await engine.ports.counters.usage(caller.keyId, periodOf(now));
    if (used >= quota) {
      throw new ApiError("quota_exceeded", `Monthly quota of ${quota} requests exhausted, so a job would read nothing; it resets at ${periodResetAt(now)}. Upgrade the plan for more.`);
    }
  }
}

/** The account's job limits: a new job needs room for one page at the per-page cap. */
const limitsOf = (engine: JobEngine, plan: Plan): AccountLimits => ({ jobs: plan.jobsConcurrent, bytes: plan.jobsStorageBytes, room: engine.config.jobs.pageBytes });

const size = sizeText;

/** The job created, or the 429 that says which of its account's job limits refused it and what to do (issue #28). */
async function started(engine: JobEngine, caller: JobCaller, created: Promise<JobRecord>): Promise<JobRecord> {
  const out = await created.catch((err) => {
    if (err instanceof JobRefused) return err.refusal;
    throw err;
  });
  if (!("created" in out)) return out;
  const plan = caller.plan;
  if (out.reason === "too_many_jobs") {
    throw new ApiError(
      "too_many_jobs",
      `This account has ${out.active} crawl and batch jobs queued or running, the most its plan (${plan.id}) allows at once (jobs_concurrent: ${plan.jobsConcurrent}); start this one when one of them ends, or cancel one (DELETE its status_url).`,
    );
  }
  const now = engine.ports.clock.now();
  const when = out.freesAt === null ? null : Math.max(1, Math.ceil((out.freesAt - now) / 1000));
  throw new ApiError(
    "job_storage_full",
    `This account's crawl and batch jobs keep ${size(out.bytes)} of pages and URLs, and its plan (${plan.id}) allows ${size(plan.jobsStorageBytes ?? 0)} (jobs_storage_bytes): not room for one more page of up to ${size(engine.config.jobs.pageBytes)}. ` +
      (out.freesAt === null
        ? "Its jobs still running hold it: room comes back as each ends and expires (QUARRY_JOB_TTL after it ends)."
        : `Finished jobs are deleted QUARRY_JOB_TTL after they end: the next at ${new Date(out.freesAt).toISOString()}.`),
    when === null ? {} : { retryAfter: when, headers: { "Retry-After": String(when) } },
  );
}

function hook(w: CrawlRequest["webhook"]): JobSpec["webhook"] {
  return w ? { url: w.url, secret: w.secret ?? null, events: w.events } : null;
}

/** The job's render fields; actions, wait_for and screenshots with `render: "never"` are a 400, as on scrape. */
function rendering(body: CrawlRequest | BatchRequest, engine: JobEngine): Pick<JobSpec, "render" | "waitFor" | "actions" | "proxy" | "location"> {
  if (body.render === "never" && needsBrowser(body)) throw new ApiError("invalid_request", NEEDS_BROWSER);
  const outlasts = waitOutlastsTimeout(body);
  if (outlasts) throw outlasts;
  // A pool this server does not have is a 400 now, not a failure on every page (api.md §12).
  checkProxyChoice(engine.ports, body.proxy);
  return {
    render: body.render, waitFor: body.wait_for ?? null, actions: body.actions?.length ? body.actions : null,
    ...(body.proxy !== "auto" ? { proxy: body.proxy } : {}), ...(body.location ? { location: body.location } : {}),
  };
}

/** The `changes` format's options (issue #31): refused without the format, or on a server that keeps no reads. */
function changesOf(engine: ReturnType<typeof engineOf>, body: CrawlRequest | BatchRequest): Pick<JobSpec, "changes"> {
  const tracking = body.formats.includes("changes");
  if (body.changes_options && !tracking) throw new ApiError("invalid_request", "changes_options needs the changes format in formats.");
  if (!tracking) return {};
  if (!engine.ports.reads) throw new ApiError("service_unavailable", "The changes format needs a store for earlier reads, and this server has none.");
  return { changes: { tag: body.changes_options?.tag ?? "", diff: body.changes_options?.diff ?? false } };
}

/** A crawl's job spec from its request (refusals first: a URL Quarry will not reach, a collection that does not exist). */
export async function crawlSpec(engine: JobEngine, caller: JobCaller, body: CrawlRequest): Promise<JobSpec> {
  refuseUnreachable(engine, [{ field: "url", url: body.url }], body.webhook, false);
  return {
    url: body.url, limit: body.limit, maxDepth: body.max_depth, includePaths: body.include_paths, excludePaths: body.exclude_paths,
    allowSubdomains: body.allow_subdomains, allowExternal: body.allow_external, respectRobots: body.respect_robots, sitemap: body.sitemap,
    formats: body.formats, onlyMainContent: body.only_main_content, timeoutMs: body.timeout_ms, ...rendering(body, engine), webhook: hook(body.webhook),
    ...changesOf(engine, body),
    ...(await collectionOf(engine, caller, body)),
  };
}

/** A batch's job spec from its request. */
export async function batchSpec(engine: JobEngine, caller: JobCaller, body: BatchRequest): Promise<JobSpec> {
  refuseUnreachable(engine, body.urls.map((url, i) => ({ field: `urls.${i}`, url })), body.webhook, true);
  return {
    url: null, limit: body.urls.length, maxDepth: 0, includePaths: [], excludePaths: [], allowSubdomains: false, allowExternal: true,
    respectRobots: false, formats: body.formats, onlyMainContent: body.only_main_content, timeoutMs: body.timeout_ms, ...rendering(body, engine),
    webhook: hook(body.webhook),
    ...changesOf(engine, body),
    ...(await collectionOf(engine, caller, body)),
  };
}

/** Starts a job of `spec` within the caller's quota and job limits (the refusals are ApiErrors). */
export async function startJob(engine: JobEngine, caller: JobCaller, kind: JobKind, spec: JobSpec, urls: string[], id?: string): Promise<JobRecord> {
  await checkQuota(engine, caller);
  return started(engine, caller, engine.create(caller, kind, spec, urls, limitsOf(engine, caller.plan), id));
}

export { engineOf };

export async function startCrawl(services: Services, caller: JobCaller, body: CrawlRequest, base: string) {
  const engine = engineOf(services);
  const job = await startJob(engine, caller, "crawl", await crawlSpec(engine, caller, body), [body.url]);
  return { id: job.id, status: job.status, status_url: `${base}${jobPath("crawl", job.id)}` };
}

export async function startBatch(services: Services, caller: JobCaller, body: BatchRequest, base: string) {
  const engine = engineOf(services);
  const job = await startJob(engine, caller, "batch", await batchSpec(engine, caller, body), body.urls);
  return { id: job.id, status: job.status, status_url: `${base}${jobPath("batch", job.id)}` };
}

/** The caller's job of this kind, or a 404 that says nothing about other accounts' jobs. */
export async function ownJob(services: Services, caller: Caller, kind: JobKind, id: string): Promise<JobRecord> {
  const engine = engineOf(services);
  const job = /^(crawl|batch)_[0-9A-Z]{26}$/.test(id) ? await engine.store.get(id) : null;
  if (!job || job.account !== caller.account || job.kind !== kind || (job.expiresAt !== null && job.expiresAt <= engine.ports.clock.now())) {
    throw new ApiError("not_found", `No ${kind === "crawl" ? "crawl" : "batch scrape"} job ${echoed(id)}.`);
  }
  return job;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function jobStatus(services: Services, caller: Caller, kind: JobKind, id: string, skip: number, base: string) {
  const job = await ownJob(services, caller, kind, id);
  const store = engineOf(services).store;
  const hook = job.spec.webhook;
  const [pages, skipped, tally] = await Promise.all([store.pages(id, skip, PAGE_SLICE), store.skippedUrls(id, 100), hook ? store.webhookTally(id) : null]);
  const data = pages.map((p) => {
    const d = p.data as Record<string, unknown>;
    const pick = Object.fromEntries(["final_url", "markdown", "text", "html", "raw_html", "links", "structured_data", "rendered", "render_note", "fetch_path", "screenshot", "changes", "truncated", "index_limit"].filter((k) => d[k] !== undefined).map((k) => [k, d[k]]));
    return { url: p.url, status_code: p.statusCode, title: p.title, ...pick, ...(p.error ? { error: p.error } : {}) };
  });
  const recorded = job.completed + job.failed;
  return {
    id: job.id, status: job.status, created_at: iso(job.createdAt)!, finished_at: iso(job.finishedAt), expires_at: iso(job.expiresAt),
    discovered: job.discovered, completed: job.completed, failed: job.failed, skipped: job.skipped, stopped_reason: job.stoppedReason,
    stored_bytes: job.bytes ?? 0,
    dropped: { links: job.dropped?.links ?? 0, content_bytes: job.dropped?.contentBytes ?? 0, skipped_urls: job.dropped?.skippedUrls ?? 0, pages: job.dropped?.pages ?? 0 },
    data,
    failures: pages.filter((p) => !p.ok).map((p) => ({ url: p.url, status_code: p.statusCode, error: p.error ?? "failed" })),
    skipped_urls: skipped,
    // Only the URL: the secret is never shown.
    ...(hook && tally ? {
      webhook: {
        url: hook.url, delivered: tally.delivered, pending: tally.pending, failed: tally.failed,
        last_error: tally.lastError && { event: tally.lastError.event, at: iso(tally.lastError.at)!, error: tally.lastError.error },
      },
    } : {}),
    next: skip + pages.length < recorded && pages.length === PAGE_SLICE ? `${base}${jobPath(kind, id)}?skip=${skip + PAGE_SLICE}` : null,
  };
}

export async function cancelJob(services: Services, caller: Caller, kind: JobKind, id: string) {
  await ownJob(services, caller, kind, id);
  const job = await engineOf(services).cancel(id);
  return { id, status: job?.status ?? "cancelled" };
}
