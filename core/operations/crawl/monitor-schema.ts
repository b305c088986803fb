/** POST/PATCH /v1/monitors and the monitor answers (issue #31). */
import * as v from "valibot";
import { Count, wholeNumber } from "../../schema/fields.ts";
import { TargetUrl } from "../../schema/targets.ts";
import { BatchBody, CrawlBody } from "./schema.ts";

/** Shortest and longest interval between runs, in seconds: 5 minutes, 30 days. */
export const MIN_INTERVAL_S = 300;
export const MAX_INTERVAL_S = 30 * 86_400;

/** What a monitor runs is what POST /v1/scrape (one URL, as a batch of one) or POST /v1/crawl would, without their own webhook, changes options or collection. */
const NOT_IN_MONITORS = ["webhook", "changes_options", "collection"] as const;

export const ScrapeMonitor = v.strictObject({
  ...v.omit(BatchBody, ["urls", ...NOT_IN_MONITORS]).entries,
  url: TargetUrl("scrape.url"),
}, "scrape must be an object: {url, formats, …} as POST /v1/scrape takes");
export const CrawlMonitor = v.strictObject(v.omit(CrawlBody, NOT_IN_MONITORS).entries, "crawl must be an object: {url, limit, max_depth, …} as POST /v1/crawl takes");

const MonitorHook = v.strictObject({
  url: TargetUrl("webhook.url"),
  secret: v.optional(v.pipe(v.string("webhook.secret must be a string"), v.minLength(1, "webhook.secret must not be empty"), v.maxLength(256, "webhook.secret must be at most 256 characters"))),
}, "webhook must be an object: {url, secret}");

const Name = v.pipe(v.string("name must be a string"), v.trim(), v.minLength(1, "name must not be empty"), v.maxLength(100, "name must be at most 100 characters"));
const Interval = v.pipe(
  wholeNumber("interval_seconds", MIN_INTERVAL_S, MAX_INTERVAL_S),
  v.description(`Seconds between runs: ${MIN_INTERVAL_S} (5 minutes) to ${MAX_INTERVAL_S} (30 days)`),
);

export const MonitorBody = v.strictObject({
  name: v.optional(Name),
  scrape: v.optional(v.pipe(ScrapeMonitor, v.description("Watch one page: the fields of POST /v1/scrape's job form (url, formats, only_main_content, timeout_ms, render, proxy…). Give this or `crawl`"))),
  crawl: v.optional(v.pipe(CrawlMonitor, v.description("Watch a site: the fields of POST /v1/crawl (url, limit, max_depth, include_paths, sitemap…). Give this or `scrape`"))),
  interval_seconds: v.optional(Interval, 3600),
  webhook: v.pipe(MonitorHook, v.description("Where a run that found a page new, changed or removed posts `monitor.changed` (signed with `X-Quarry-Signature` when it has a `secret`); nothing is sent when nothing changed")),
  diff: v.optional(v.pipe(v.boolean("diff must be a boolean"), v.description("Send each changed page's git-style unified diff of the markdown (default true)")), true),
  paused: v.optional(v.boolean("paused must be a boolean"), false),
});
export type MonitorRequest = v.InferOutput<typeof MonitorBody>;

export const MonitorPatchBody = v.pipe(
  v.strictObject({
    name: v.optional(v.nullable(Name)),
    interval_seconds: v.optional(Interval),
    webhook: v.optional(MonitorHook),
    paused: v.optional(v.pipe(v.boolean("paused must be a boolean"), v.description("true pauses it (no run starts); false resumes it (a run that fell due while paused starts at once)"))),
  }),
  v.check((b) => Object.keys(b).length > 0, "give at least one of name, interval_seconds, webhook, paused"),
);
export type MonitorPatchRequest = v.InferOutput<typeof MonitorPatchBody>;

const Nullable = v.nullable(v.string());

export const MonitorAnswer = v.object({
  id: v.pipe(v.string(), v.description("mon_<ulid>")),
  name: Nullable,
  type: v.picklist(["scrape", "crawl"]),
  url: v.string(),
  interval_seconds: Count,
  paused: v.boolean(),
  diff: v.boolean(),
  webhook: v.pipe(v.object({ url: v.string() }), v.description("Its URL only: the secret is never shown")),
  scrape: v.optional(v.record(v.string(), v.unknown())),
  crawl: v.optional(v.record(v.string(), v.unknown())),
  created_at: v.string(),
  updated_at: v.string(),
  next_run_at: v.pipe(v.string(), v.description("When the next run is due (a paused monitor runs at once when resumed past it)")),
  last_run_at: Nullable,
});

export const MonitorList = v.object({ data: v.array(MonitorAnswer) });
export const MonitorDeleted = v.object({ id: v.string(), deleted: v.literal(true) });

export const RunAnswer = v.object({
  id: v.pipe(v.string(), v.description("run_<ulid>, also the `X-Quarry-Delivery` id of the webhook it sent")),
  status: v.pipe(v.picklist(["starting", "running", "settling", "done"]), v.description("starting: its job is being created; running: its job reads; settling: comparing and notifying; done")),
  outcome: v.pipe(Nullable, v.description("When done: baseline (the first run: pages recorded, nothing sent), unchanged (nothing sent), changed (the webhook was sent), failed (no page could be read), skipped (the previous run was still going), or why its job was refused: quota_exceeded, too_many_jobs, job_storage_full, key_revoked, url_not_allowed, service_unavailable")),
  job_id: v.pipe(Nullable, v.description("The crawl or batch job it ran: readable at /v1/crawl/{id} or /v1/batch/scrape/{id} until it expires")),
  due_at: v.string(),
  started_at: v.string(),
  finished_at: Nullable,
  pages: v.pipe(Count, v.description("Pages the job recorded")),
  changed: v.pipe(Count, v.description("Pages new, changed or removed since the previous run")),
  detail: v.pipe(Nullable, v.description("Why it stopped early or was refused")),
});
export const RunList = v.object({ data: v.array(RunAnswer) });
