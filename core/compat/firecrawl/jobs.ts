/**
 * Firecrawl crawl and batch scrape (v2 and v1) → the native jobs (api.md §9). Starting answers
 * 200 `{success, id, url}` (the SDKs take nothing else for success); the status answers
 * Firecrawl's `{status: scraping|completed|failed|cancelled, completed, total, data, next}` with
 * `next` an absolute URL of this API (`QUARRY_PUBLIC_URL`, or the request's origin), which the
 * SDK follows by itself; `/errors` lists the failed pages and the URLs robots.txt kept out.
 * Quarry's own fields ride in `quarry`, a job's webhook deliveries (`quarry.webhook`) among them.
 */
import type { Context } from "hono";
import * as v from "valibot";
import { ApiError } from "../../errors.ts";
import type { AppEnv } from "../../gateway/context.ts";
import { compilePathPattern, PATTERN_RULE } from "../../jobs/path-patterns.ts";
import { authorizationOf, type Dispatch } from "../dispatch.ts";
import { asIgnored, bodyOf, readBody, refuseSchemesAsInvalid } from "../http.ts";
import { JOB_PATH, jobSlice, skipOf, skipQuery, wholeJob, type JobKind, type NativeJob } from "../native-jobs.ts";
import type { Clamped } from "../clamped.ts";
import { firecrawlFailure, stopEntry } from "./failures.ts";
import { badField, Delay, MaxConcurrency, urlDepth, withScheme } from "./checks.ts";
import { changeTracking } from "./change-tracking.ts";
import { CLIENT_FIELDS, firecrawlWarning, ScrapeOptions, toNativeScrape, type FirecrawlScrapeOptions } from "./scrape.ts";

/** Quarry's crawl: 1 to 10000 pages, links followed at most 10 deep. */
const MAX_PAGES = 10_000;
const MAX_DEPTH = 10;
/** Firecrawl's crawl `limit`, and v1's `maxDepth`, when the body leaves them out. */
const FIRECRAWL_LIMIT = 10_000;
const V1_MAX_DEPTH = 10;

/**
 * Page options of a job from Firecrawl's scrape options, mapped as scrape maps them (formats,
 * onlyMainContent, timeout, and with a browser on this server waitFor, actions and the
 * screenshot format, which jobs render as scrape does); what cannot apply is named.
 */
function pageOptions(opts: FirecrawlScrapeOptions | null | undefined, ignored: Set<string>, clamped: Clamped[], prefix: string, canRender: boolean): Record<string, unknown> {
  if (!opts) return {};
  const plan = toNativeScrape("", opts, [], canRender, prefix, false, true);
  for (const name of plan.ignored) ignored.add(prefix + name);
  clamped.push(...plan.clamped);
  const { url: _url, ...native } = plan.native;
  return native;
}

const EVENTS = ["started", "page", "completed", "failed"];

function badWebhook(field: string, message: string): ApiError {
  return new ApiError("invalid_request", `${field}: ${message}`, { details: [{ field, message }] });
}

/**
 * Firecrawl's webhook → Quarry's: `url` and `events`; a `secret` (Quarry's, not Firecrawl's)
 * signs the deliveries with X-Quarry-Signature. Anything else is named as not applied. A webhook
 * that is neither a URL nor an object with one is a 400: dropping it would start a job whose
 * caller waits for deliveries that never come.
 */
function webhook(value: unknown, ignored: Set<string>): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return { url: value };
  if (typeof value !== "object" || Array.isArray(value)) throw badWebhook("webhook", "webhook must be a URL or an object {url, events?}");
  const w = value as { url?: unknown; events?: unknown; headers?: unknown; metadata?: unknown; secret?: unknown };
  if (typeof w.url !== "string") throw badWebhook("webhook.url", w.url === undefined ? "webhook.url is required" : "webhook.url must be a string");
  if (w.headers || w.metadata) ignored.add("webhook.headers/metadata");
  for (const k of Object.keys(w)) if (!["url", "events", "headers", "metadata", "secret"].includes(k)) ignored.add(`webhook.${k}`);
  const events = Array.isArray(w.events) ? w.events.filter((e) => EVENTS.includes(String(e))) : undefined;
  if (Array.isArray(w.events)) for (const e of w.events) if (!EVENTS.includes(String(e))) ignored.add(`webhook.events.${String(e).slice(0, 40)}`);
  return { url: w.url, ...(typeof w.secret === "string" ? { secret: w.secret } : {}), ...(events?.length ? { events } : {}) };
}

const loose = v.optional(v.nullable(v.unknown()));
const CrawlBody = v.looseObject({
  url: v.string("url must be a string"),
  limit: v.optional(v.nullable(v.number("limit must be a number"))),
  maxDiscoveryDepth: v.optional(v.nullable(v.number("maxDiscoveryDepth must be a number"))),
  maxDepth: v.optional(v.nullable(v.number("maxDepth must be a number"))),
  includePaths: v.optional(v.nullable(v.array(v.string(), "includePaths must be an array of patterns"))),
  excludePaths: v.optional(v.nullable(v.array(v.string(), "excludePaths must be an array of patterns"))),
  allowExternalLinks: v.optional(v.nullable(v.boolean())),
  allowSubdomains: v.optional(v.nullable(v.boolean())),
  sitemap: v.optional(v.nullable(v.picklist(["include", "skip", "only"], "sitemap must be include, skip or only"))),
  ignoreSitemap: v.optional(v.nullable(v.boolean("ignoreSitemap must be a boolean"))),
  scrapeOptions: v.optional(v.nullable(ScrapeOptions)),
  webhook: loose,
  maxConcurrency: MaxConcurrency,
  delay: Delay,
});
const BatchBody = v.looseObject({
  ...ScrapeOptions.entries,
  urls: v.pipe(v.array(v.string("each URL must be a string"), "urls must be an array of URLs"), v.minLength(1, "urls must not be empty")),
  ignoreInvalidURLs: v.optional(v.nullable(v.boolean())),
  webhook: loose,
  maxConcurrency: MaxConcurrency,
});

/** The public base of this API's URLs: QUARRY_PUBLIC_URL, or the origin the request came to. */
export type PublicBase = (c: Context<AppEnv>) => string;

function started(c: Context<AppEnv>, base: string, id: string, ignored: string[], clamped: Clamped[], extra: Record<string, unknown> = {}) {
  const warning = firecrawlWarning(ignored, clamped);
  return c.json({ success: true, id, url: `${base}/${id}`, ...extra, ...(warning ? { warning } : {}), quarry: { ignored: asIgnored(ignored), clamped } });
}

/**
 * Firecrawl takes any number as a crawl's `limit` and depth. Quarry applies a whole number within
 * its own bounds and says which: a `maxDiscoveryDepth` below 0 or with a fraction never matches a
 * link's depth in Firecrawl's crawler, so it sets no bound there and gets Quarry's deepest here.
 * A value left out is Firecrawl's default, not native's: 10000 pages, and no depth bound (v2) or
 * v1's `maxDepth` 10, Quarry's deepest either way.
 */
function crawlBounds(body: v.InferOutput<typeof CrawlBody>, url: string, version: "v1" | "v2", clamped: Clamped[]): { limit: number; max_depth: number } {
  const limit = Math.min(MAX_PAGES, Math.max(1, Math.floor(body.limit ?? FIRECRAWL_LIMIT)));
  if (typeof body.limit === "number" && limit !== body.limit) {
    clamped.push({ option: "limit", requested: body.limit, applied: limit, reason: body.limit > MAX_PAGES ? `Quarry crawls at most ${MAX_PAGES} pages a job` : "Quarry crawls a whole number of pages, at least 1" });
  }
  const out = { limit, max_depth: MAX_DEPTH };
  // Firecrawl v1 refuses a start URL whose path is deeper than maxDepth (10 unless given).
  if (version === "v1" && urlDepth(url) > (body.maxDepth ?? V1_MAX_DEPTH)) {
    throw badField("maxDepth", `the URL's path is ${urlDepth(url)} segments deep, more than maxDepth (${body.maxDepth ?? V1_MAX_DEPTH}); raise maxDepth or start higher up the site`);
  }
  const [option, depth] = typeof body.maxDiscoveryDepth === "number" ? ["maxDiscoveryDepth", body.maxDiscoveryDepth] as const : ["maxDepth", body.maxDepth] as const;
  if (typeof depth === "number") {
    const unbounded = option === "maxDiscoveryDepth" && (depth < 0 || !Number.isInteger(depth));
    out.max_depth = unbounded ? MAX_DEPTH : Math.min(MAX_DEPTH, Math.floor(depth));
    if (out.max_depth !== depth) {
      const reason = unbounded ? `Firecrawl sets no depth bound for a ${option} below 0 or with a fraction; Quarry follows links at most ${MAX_DEPTH} deep` : depth > MAX_DEPTH ? `Quarry follows links at most ${MAX_DEPTH} deep` : "Quarry follows links a whole number deep";
      clamped.push({ option, requested: depth, applied: out.max_depth, reason });
    }
  }
  return out;
}

export function firecrawlCrawlStart(dispatch: Dispatch, publicBase: PublicBase, version: "v1" | "v2", canRender: () => boolean) {
  return async (c: Context<AppEnv>) => {
    const body = await readBody(c, CrawlBody);
    const url = withScheme(body.url);
    const ignored = new Set<string>();
    const clamped: Clamped[] = [];
    refuseSchemesAsInvalid([{ field: "url", url }]);
    const native: Record<string, unknown> = { url, ...(URL.canParse(url) ? crawlBounds(body, url, version, clamped) : {}) };
    // Checked here so that a refusal names the client's fields, not the native include_paths.
    for (const field of ["includePaths", "excludePaths"] as const) {
      const bad = (body[field] ?? []).findIndex((p) => !compilePathPattern(p));
      if (bad >= 0) throw new ApiError("invalid_request", `${field}.${bad}: each of ${field} must be ${PATTERN_RULE}`, { details: [{ field: `${field}.${bad}`, message: `each of ${field} must be ${PATTERN_RULE}` }] });
    }
    if (body.includePaths?.length) native.include_paths = body.includePaths;
    if (body.excludePaths?.length) native.exclude_paths = body.excludePaths;
    if (typeof body.allowExternalLinks === "boolean") native.allow_external = body.allowExternalLinks;
    if (typeof body.allowSubdomains === "boolean") native.allow_subdomains = body.allowSubdomains;
    // Firecrawl reads sitemaps unless told not to: v2's `sitemap` (include by default), v1's `ignoreSitemap`.
    native.sitemap = body.sitemap ?? (body.ignoreSitemap ? "skip" : "include");
    Object.assign(native, pageOptions(body.scrapeOptions, ignored, clamped, "scrapeOptions.", canRender()));
    const hook = webhook(body.webhook, ignored);
    if (hook) native.webhook = hook;
    if (hook) refuseSchemesAsInvalid([{ field: "webhook.url", url: String(hook.url) }]);
    const known = new Set([...CLIENT_FIELDS, "url", "limit", "maxDiscoveryDepth", "maxDepth", "includePaths", "excludePaths", "allowExternalLinks", "allowSubdomains", "sitemap", "ignoreSitemap", "scrapeOptions", "webhook"]);
    for (const [k, val] of Object.entries(body)) if (!known.has(k) && val !== undefined && val !== null && val !== false) ignored.add(k);
    const job = bodyOf<{ id: string }>(await dispatch(c, { method: "POST", path: JOB_PATH.crawl, body: native, authorization: authorizationOf(c) }));
    return started(c, `${publicBase(c)}/compat/firecrawl/${version}/crawl`, job.id, [...ignored].sort(), clamped);
  };
}

export function firecrawlBatchStart(dispatch: Dispatch, publicBase: PublicBase, version: "v1" | "v2", canRender: () => boolean) {
  return async (c: Context<AppEnv>) => {
    const body = await readBody(c, BatchBody);
    const ignored = new Set<string>();
    const clamped: Clamped[] = [];
    const valid = (u: string) => /^https?:\/\/[^\s/]/i.test(u) && URL.canParse(u);
    // Each entry as Firecrawl reads it (a bare host gets http://); invalidURLs lists them as sent.
    const entries = body.urls.map((sent, i) => ({ sent, url: withScheme(sent), field: `urls.${i}` }));
    // Firecrawl's v2 drops invalid URLs unless told not to; its v1 refuses the batch unless told to drop them.
    const ignoreInvalid = body.ignoreInvalidURLs ?? version === "v2";
    const kept = ignoreInvalid ? entries.filter((e) => valid(e.url)) : entries;
    const invalid = entries.filter((e) => !kept.includes(e)).map((e) => e.sent);
    if (kept.length === 0) {
      throw new ApiError("invalid_request", `urls: none is a valid http(s) URL, so there is nothing to scrape (ignoreInvalidURLs dropped all ${invalid.length}).`, { details: [{ field: "urls", message: "no valid URL" }] });
    }
    const { urls: _u, ignoreInvalidURLs: _i, webhook: hookIn, ...opts } = body;
    const native: Record<string, unknown> = { urls: kept.map((e) => e.url), ...pageOptions(opts as FirecrawlScrapeOptions, ignored, clamped, "", canRender()) };
    for (const k of CLIENT_FIELDS) ignored.delete(k);
    const hook = webhook(hookIn, ignored);
    if (hook) native.webhook = hook;
    refuseSchemesAsInvalid([...kept.map(({ field, url }) => ({ field, url })), ...(hook ? [{ field: "webhook.url", url: String(hook.url) }] : [])]);
    const job = bodyOf<{ id: string }>(await dispatch(c, { method: "POST", path: JOB_PATH.batch, body: native, authorization: authorizationOf(c) }));
    return started(c, `${publicBase(c)}/compat/firecrawl/${version}/batch/scrape`, job.id, [...ignored].sort(), clamped, invalid.length ? { invalidURLs: invalid } : {});
  };
}

const STATUS: Record<NativeJob["status"], string> = { queued: "scraping", running: "scraping", completed: "completed", failed: "failed", cancelled: "cancelled" };

function document(p: NativeJob["data"][number]): Record<string, unknown> {
  return {
    ...(p.markdown !== undefined ? { markdown: p.markdown } : {}),
    ...(p.html !== undefined ? { html: p.html } : {}),
    ...(p.raw_html !== undefined ? { rawHtml: p.raw_html } : {}),
    ...(p.links !== undefined ? { links: p.links.map((l) => l.url) } : {}),
    ...(p.screenshot !== undefined ? { screenshot: `data:image/png;base64,${p.screenshot}` } : {}),
    ...(p.changes ? { changeTracking: changeTracking(p.changes) } : {}),
    metadata: { ...(p.title !== null ? { title: p.title } : {}), sourceURL: p.url, url: p.final_url ?? p.url, statusCode: p.status_code },
  };
}

/**
 * Firecrawl keeps crawls and batch scrapes as one kind of job, and the v1 client's
 * batchScrapeUrls waits for a batch on `GET /v1/crawl/{id}` and its errors on the crawl's
 * errors route: a batch id read through a crawl route is read as the batch it is.
 */
const kindOf = (route: JobKind, id: string): JobKind => (route === "crawl" && id.startsWith("batch_") ? "batch" : route);

export function firecrawlJobStatus(dispatch: Dispatch, publicBase: PublicBase, routeKind: JobKind, version: "v1" | "v2") {
  return async (c: Context<AppEnv>) => {
    const id = c.req.param("id") ?? "";
    // The clients' getActiveCrawls: not a job id, and "No crawl job active." would read as "none is".
    if (routeKind === "crawl" && id === "active") throw new ApiError("not_found", `Quarry does not list active crawls (GET ${c.req.path}); read each crawl by the id its start answered.`);
    const kind = kindOf(routeKind, id);
    const segment = kind === "crawl" ? "crawl" : "batch/scrape";
    let job = await jobSlice(dispatch, c, kind, id, authorizationOf(c), skipQuery(c));
    // Failed pages are left out of `data` (the errors route lists them). A slice of only failed
    // pages would answer no data with a `next`, and the v1 client stops following `next` at an
    // empty answer: it would return no pages though later slices have them. Read on instead.
    while (!job.data.some((p) => !p.error) && skipOf(job.next) !== null) {
      job = await jobSlice(dispatch, c, kind, id, authorizationOf(c), `?skip=${skipOf(job.next)}`);
    }
    const skip = skipOf(job.next);
    return c.json({
      success: true,
      status: STATUS[job.status],
      completed: job.completed,
      total: job.status === "completed" ? job.completed + job.failed : Math.max(job.discovered, job.completed + job.failed),
      creditsUsed: job.completed,
      expiresAt: job.expires_at,
      // v1 clients follow `next` while the key is there at all: the last slice leaves it out.
      ...(skip === null ? (version === "v2" ? { next: null } : {}) : { next: `${publicBase(c)}/compat/firecrawl/${version}/${segment}/${encodeURIComponent(id)}?skip=${skip}` }),
      // A page that is gone since the last read is listed, as Firecrawl lists it: changeStatus "removed".
      data: job.data.filter((p) => !p.error || p.changes?.change_status === "removed").map(document),
      // A job with a webhook: what became of its deliveries, as the native status gives it.
      quarry: { status: job.status, stopped_reason: job.stopped_reason, failed: job.failed, skipped: job.skipped, dropped: job.dropped, ...(job.webhook ? { webhook: job.webhook } : {}) },
    });
  };
}

export function firecrawlJobCancel(dispatch: Dispatch, kind: JobKind) {
  return async (c: Context<AppEnv>) => {
    const id = c.req.param("id") ?? "";
    const res = bodyOf<{ status: string }>(await dispatch(c, { method: "DELETE", path: `${JOB_PATH[kind]}/${encodeURIComponent(id)}`, authorization: authorizationOf(c) }));
    return c.json({ success: true, status: res.status });
  };
}

export function firecrawlJobErrors(dispatch: Dispatch, routeKind: JobKind) {
  return async (c: Context<AppEnv>) => {
    const id = c.req.param("id") ?? "";
    const job = await wholeJob(dispatch, c, kindOf(routeKind, id), id, authorizationOf(c));
    const when = job.finished_at ?? job.created_at;
    const stop = stopEntry(job);
    return c.json({
      success: true,
      errors: [
        ...job.failures.map((f, i) => ({ id: `${id}-${i + 1}`, timestamp: when, url: f.url, ...firecrawlFailure(f) })),
        ...(stop ? [{ id: `${id}-stopped`, timestamp: when, ...stop }] : []),
      ],
      // Robots refusals: the links robots.txt kept out, and the pages (a start page, a batch URL) it refused.
      robotsBlocked: [...job.skipped_urls.filter((s) => /robots/i.test(s.reason)), ...job.failures.filter((f) => /^robots_/.test(f.error))].map((s) => s.url),
      quarry: { skipped_urls: job.skipped_urls },
    });
  };
}
