/**
 * One task of a job: read one URL and record what it gave. In order: the job must still be
 * running and within its deadline; the frontier entry is claimed (so a task handed out twice is
 * worked once); robots.txt; one unit of quota, quota only (the per-minute window is for
 * requests, not a job's pages); a slot on the host (2 at a time, Crawl-delay); the page read as
 * scrape reads it (guarded fetch, the browser when asked or for a script shell, extraction); the
 * links found, filtered (private addresses, scope, robots, traps); then one store transaction records the page and the new frontier entries. The unit is
 * committed only when that transaction recorded a page that succeeded: failed pages and pages a
 * second worker recorded first cost nothing.
 */
import { decodeHtml } from "../extract/decode-html.ts";
import { periodOf, WINDOW_MS } from "../limits/period.ts";
import { Blocked, failureCode } from "../net/fetch-errors.ts";
import { TERMINAL, type JobRecord, type JobTask, type PageResult, type SkippedUrl, type StoppedReason } from "../ports/job-model.ts";
import { HOST_DOWN, HostDown, unreachableFailure } from "./site-streaks.ts";
import { pageOutcome } from "./job-metrics.ts";
import { capPageData, MAX_SKIPPED_URLS, STORAGE_FULL } from "./sizes.ts";
import { discover } from "./discover.ts";
import type { WorkContext } from "./work-context.ts";
import { indexPage, planCaps } from "../collections/service.ts";
import type { Heartbeat } from "./leases.ts";
import type { JobStore } from "../ports/jobs.ts";
import { pageLinks } from "./site-files.ts";
import { readsSitemaps, sitemapUrls, streakDepth } from "./sitemap-seeds.ts";
import { trackChanges, type PageChanges } from "../changes/track.ts";

function failedPage(url: string, statusCode: number, error: string, data: Record<string, unknown> = {}): PageResult {
  return { url, ok: false, statusCode, title: null, data, error };
}

/** The reason a fetch failed, as a short code (the public error code of the failure). */
function failureOf(err: unknown): string {
  return err instanceof HostDown ? err.code : failureCode(err);
}

/**
 * Runs one task; "released" when it was aborted before its page was read (the job ended, or the
 * server is stopping) and its entry, if it had claimed it, was given back.
 */
export async function runTask(ctx: WorkContext, task: JobTask, lease?: number): Promise<"released" | void> {
  // Tracked from the start, so a stopping server stops it before its claim, robots.txt or host slot.
  const ac = new AbortController();
  const held: Held = { units: 0, claimed: lease !== undefined, ac, untrack: ctx.track(task.jobId, ac) };
  try {
    return await work(ctx, task, held, lease);
  } catch (err) {
    // Failed after its claim (the store or the counters down): one process gives the entry back
    // for the engine to try again; with a shared queue it stays claimed until its lease runs
    // out and the watchdog hands it to the queue again, however long the outage lasted.
    if (held.claimed && !ctx.shared) await ctx.store.release(task).catch(() => {});
    throw err;
  } finally {
    held.untrack();
    held.beat?.stop();
    if (held.units) ctx.hold(task.jobId, -held.units);
  }
}

/**
 * Several instances: the worker reads the page the store's fair order puts first (claimNext),
 * whichever queue task it was handed, so no account's backlog holds another's pages behind it
 * (issue #28). Every pending entry has a task in the queue, so none is left unread.
 */
export async function runNext(ctx: WorkContext): Promise<"released" | void> {
  const now = ctx.ports.clock.now();
  const next = await ctx.store.claimNext(now, ctx.leaseMs);
  return next ? runTask(ctx, next, now + ctx.leaseMs) : undefined;
}

type Held = { units: number; beat?: Heartbeat; claimed: boolean; ac: AbortController; untrack: () => void };

/** `lease`: the task's entry is claimed already (claimNext), until then. */
async function work(ctx: WorkContext, task: JobTask, held: Held, lease?: number): Promise<"released" | void> {
  const { store, ports } = ctx;
  const ac = held.ac;
  const beatFrom = (until: number) => (held.beat ??= ctx.heartbeat(task, until));
  if (lease !== undefined) beatFrom(lease);
  const job = await ctx.job(task.jobId);
  if (!job || TERMINAL.has(job.status)) return;
  const now = ports.clock.now();
  if (now >= job.deadlineAt) return ctx.stopJob(job.id, "deadline");
  if (lease === undefined) {
    if (ac.signal.aborted) return "released"; // not taken: another worker (or the next start) reads it
    if (!(await store.claim(task, now, ctx.leaseMs))) return;
    held.claimed = true;
    lease = now + ctx.leaseMs;
  }
  const beat = beatFrom(lease);
  const spec = job.spec;
  const target = new URL(task.url);
  if (ac.signal.aborted) return giveBack(store, task);
  // Its host stopped answering this job: failed at once, never requested nor charged.
  if (ctx.streaks.down(job.id, target.host)) return record(ctx, job, task, failedPage(task.url, 0, HOST_DOWN), [], null);
  const robots = spec.respectRobots ? await ctx.robots.get(target.origin) : null;
  // Its fetch (or its failure to get an answer) counts toward the host's streak; a page it keeps out fails.
  const kept = robots && ctx.streaks.robots(job, target, streakDepth(job, task), robots);
  if (kept) return record(ctx, job, task, failedPage(task.url, 0, kept.error), [], null, kept.stop, kept.unreachable);
  const delay = robots?.crawlDelay();
  let release: (() => void) | null = null;
  let ticket: string | null = null;
  let lost = false;
  let page: PageResult;
  let links: string[] = [];
  let cutBytes = 0;
  let unreachable = false, asked = 0; // asked: its request's turn among this process's (orders the host's streak)
  try {
    const plan = await ctx.planOf(job);
    const admit = () => {
      const at = ports.clock.now();
      return ports.counters.admit({
        keyId: job.keyId, now: at, perMinute: plan.perMinute, windowMs: WINDOW_MS, period: periodOf(at), group: "crawl", quota: plan.quota, window: false,
      });
    };
    let admitted = await admit();
    // Refused while this job's other pages hold reservations: those may yet fail and give their
    // unit back, so wait for them before deciding the quota is really spent.
    while (!admitted.ok && ctx.holding(job.id) > 0 && !ac.signal.aborted) {
      await new Promise((r) => setTimeout(r, 50));
      if (ctx.holding(job.id) === 0) admitted = await admit();
    }
    if (ac.signal.aborted) throw ac.signal.reason;
    if (!admitted.ok) {
      await store.release(task).catch(() => {});
      return ctx.stopJob(job.id, "quota_exceeded");
    }
    ticket = admitted.ticket;
    ctx.hold(job.id, 1);
    held.units = 1;
    // The slot last, right before the request: Crawl-delay spaces the requests, not the bookkeeping.
    release = await ctx.gate.acquire(target.host, delay ? Math.min(delay * 1000, 60_000) : 0, ac.signal);
    // Several instances: still ours? A lease this process failed to renew in time (a stalled event
    // loop) went back to the queue, maybe to another worker: the page is theirs now.
    if (!(await beat.holds())) {
      lost = true;
      throw new Error("claim lost");
    }
    // The last moment a stop takes the page back: from here its request is under way, and a
    // stopping server lets it finish rather than have it fetched again elsewhere.
    if (ac.signal.aborted) throw ac.signal.reason;
    ctx.reading(ac);
    try {
      // Its host went down while this page waited for its turn: not requested either.
      asked = ctx.streaks.begin();
      if (ctx.streaks.down(job.id, target.host)) throw new HostDown();
      const { read, data, markdown } = await ctx.readPage({
        url: task.url, formats: spec.formats, only_main_content: spec.onlyMainContent, timeout_ms: spec.timeoutMs, signal: ac.signal, account: job.account,
        render: spec.render ?? "auto", ...(spec.waitFor != null ? { wait_for: spec.waitFor } : {}), ...(spec.actions?.length ? { actions: spec.actions } : {}),
        ...(spec.proxy ? { proxy: spec.proxy } : {}), ...(spec.location ? { location: spec.location } : {}),
      });
      const changes = await pageChanges(ctx, job, task, read.status, data ? (markdown ?? null) : null);
      const meta = { final_url: read.finalUrl, content_type: read.contentType, rendered: read.rendered, ...(changes !== undefined ? { changes } : {}) };
      if (read.status >= 400) {
        page = failedPage(task.url, read.status, `http_${read.status}`, meta);
      } else if (!data) {
        page = failedPage(task.url, read.status, "unsupported_content", meta);
      } else {
        // Stored within the per-page cap: formats past it are cut and named in `truncated`.
        const capped = capPageData({ ...meta, ...data }, ctx.config.jobs.pageBytes);
        cutBytes = capped.cut;
        page = { url: task.url, ok: true, statusCode: read.status, title: data.title, data: capped.data, error: null };
        // Indexed before it is recorded: a crash in between reads it again, and the same content is left as it is.
        // Past a plan cap the page is a failed page `index_full` naming the limit, free, and the job goes on: a
        // later page may still fit (smaller, or one whose earlier version it replaces, or unchanged).
        const refused = spec.collection ? await indexPage(ctx.ports.collections, job.account, spec.collection, { url: task.url, title: data.title, markdown: String(data.markdown ?? "") }, planCaps(await ctx.planOf(job)), ctx.ports.clock.now()) : null;
        if (refused) page = failedPage(task.url, read.status, refused.code, { ...meta, ...(refused.code === "index_full" ? { index_limit: refused.limit } : {}) });
        // Links from what was read: a rendered page's links include those its scripts added.
        if (job.kind === "crawl" && spec.sitemap !== "only" && task.depth < spec.maxDepth && /html/i.test(read.contentType ?? "html")) {
          links = pageLinks(decodeHtml(read.body, read.contentType), read.finalUrl).map((l) => l.url);
        }
      }
    } catch (err) {
      // A page behind a bot wall keeps the wall's status, and what was tried (api.md §12): free, like every failed page.
      page = err instanceof Blocked ? failedPage(task.url, err.block.status, err.code, { fetch_path: err.fetchPath }) : failedPage(task.url, 0, failureOf(err));
      unreachable = unreachableFailure(err);
    }
  } catch (err) {
    // Aborted while waiting for the host (the job was cancelled or stopped), or storage failed.
    if (ticket) await ports.counters.release(ticket).catch(() => {});
    release?.();
    if (lost) {
      ports.logger.warn({ job_id: job.id, url: task.url }, "job page left to another worker: its claim ran out before the fetch");
      return;
    }
    if (!ac.signal.aborted) throw err; // runTask decides what becomes of the entry
    return giveBack(store, task);
  }
  release();
  if (ac.signal.aborted) {
    // Cancelled (the job is over) or stopped mid-request (the entry goes back to the queue).
    if (ticket) await ports.counters.release(ticket).catch(() => {});
    return giveBack(store, task);
  }
  const stop = ctx.streaks.count(job, target, streakDepth(job, task), page.statusCode, unreachable, asked);
  const found = await discoverAll(ctx, job, task, links, !unreachable && stop === null && readsSitemaps(job, task), ac.signal);
  await record(ctx, job, task, page, found, ticket, stop, unreachable, cutBytes);
}

/**
 * The `changes` format (issue #31): the page compared with the account's last read of its URL,
 * and kept in its place. Undefined when the job did not ask, or read no content it could compare
 * (an unsupported type); null for an error that says nothing of the page (core/changes/track.ts).
 * A diff longer than a quarter of the per-page cap is left out (null), so the page stays within it.
 */
async function pageChanges(ctx: WorkContext, job: JobRecord, task: JobTask, status: number, markdown: string | null): Promise<PageChanges | null | undefined> {
  const reads = ctx.ports.reads;
  if (!reads || !job.spec.formats.includes("changes")) return undefined;
  if (markdown === null && status < 400) return undefined;
  const ask = job.spec.changes ?? { tag: "", diff: false };
  const changes = await trackChanges(reads, job.account, task.url, ask, { status, markdown }, ctx.ports.clock.now());
  if (changes?.diff && changes.diff.length > ctx.config.jobs.pageBytes / 4) changes.diff = null;
  return changes;
}

/**
 * The page's links, and at the start page of a crawl that reads sitemaps its site's sitemap URLs
 * (depth 0, first, so a URL both list is taken once, at the lower depth). A sitemap that cannot be
 * read adds nothing; the page's links still count.
 */
async function discoverAll(ctx: WorkContext, job: JobRecord, task: JobTask, links: string[], sitemaps: boolean, signal: AbortSignal) {
  const listed = sitemaps ? await sitemapUrls(ctx, job, task.url, signal).catch(() => []) : [];
  if (!listed.length) return links.length ? discover(ctx, job, links, task) : { tasks: [], skipped: [], dropped: 0 };
  const seeds = await discover(ctx, job, listed, task, 0);
  const taken = new Set(seeds.tasks.map((t) => t.url));
  const rest = await discover(ctx, job, links.filter((l) => !taken.has(l)), task);
  return { tasks: [...seeds.tasks, ...rest.tasks.filter((t) => !taken.has(t.url))], skipped: [...seeds.skipped, ...rest.skipped], dropped: seeds.dropped + rest.dropped };
}

/** A claimed entry given back unread (pending again); a store that fails leaves it to its lease. */
async function giveBack(store: JobStore, task: JobTask): Promise<"released"> {
  await store.release(task).catch(() => {});
  return "released";
}

async function record(
  ctx: WorkContext,
  job: JobRecord,
  task: JobTask,
  page: PageResult,
  found: { tasks: JobTask[]; skipped: SkippedUrl[]; dropped: number } | [],
  ticket: string | null,
  /** Ends the job once the page is recorded (the site refused it or is gone), instead of completing it as counted. */
  stop: StoppedReason | null = null,
  unreachable = false, // its failure says the host could not be reached (the page's outcome in metrics)
  cutBytes = 0, // bytes of its content the per-page cap left out
): Promise<void> {
  const { tasks, skipped, dropped } = Array.isArray(found) ? { tasks: [], skipped: [], dropped: 0 } : found;
  let res;
  try {
    // What the account's jobs may hold (its plan), and what this page's caps left out, recorded with it.
    const plan = await ctx.planOf(job);
    const opts = { accountBytes: plan.jobsStorageBytes, skippedUrls: MAX_SKIPPED_URLS, droppedLinks: dropped, cutBytes };
    res = await ctx.store.finish(task, page, tasks, skipped, ctx.ports.clock.now(), opts);
  } catch (err) {
    if (ticket) await ctx.ports.counters.release(ticket).catch(() => {});
    throw err;
  }
  if (res.full) {
    // The account's job storage is full: the page was kept without its content, as a failure that costs nothing, and the job ends.
    page = { url: page.url, ok: false, statusCode: page.statusCode, title: null, data: {}, error: STORAGE_FULL };
    stop = "storage_full";
  }
  if (ticket) {
    // Settled without holding the worker: the page is recorded; its unit follows (a process
    // killed in between leaves the page uncounted, never counted twice).
    const settle = res.recorded && page.ok ? ctx.ports.counters.commit(ticket) : ctx.ports.counters.release(ticket);
    ctx.settling(settle.then(() => {}, (err) => ctx.ports.logger.warn({ job_id: job.id, err: String(err) }, "could not settle a page's quota unit")));
  }
  if (!res.recorded) return stop ? ctx.stopJob(job.id, stop) : undefined;
  ctx.ports.metrics?.jobPage?.(job.kind, pageOutcome(page, unreachable));
  // Its links are frontier entries now (added, or there already), except those the job's limit
  // cut off: then only the added ones are known to be there.
  ctx.trapsOf(job.id).recorded((res.limited ? res.added : tasks).map((t) => t.url));
  ctx.ports.logger.debug({ job_id: job.id, url: page.url, ok: page.ok }, "job page recorded");
  const changes = page.data.changes as PageChanges | null | undefined;
  ctx.webhooks.emit(job, "page", {
    url: page.url, status_code: page.statusCode, title: page.title, ...(page.error ? { error: page.error } : {}),
    ...(changes ? { change_status: changes.change_status } : {}),
  }, ctx.ports.clock.now());
  if (res.added.length) await ctx.queue.push(res.added);
  if (stop) await ctx.stopJob(job.id, stop);
  else if (res.remaining === 0) await ctx.complete(job.id);
}
