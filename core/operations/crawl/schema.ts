/** POST /v1/crawl, POST /v1/batch/scrape and the job answers (api.md §9). */
import * as v from "valibot";
import { COLLECTION_NAME } from "../../collections/service.ts";
import { Count, wholeNumber } from "../../schema/fields.ts";
import { TargetUrl } from "../../schema/targets.ts";
import { RenderFields } from "../../schema/render-fields.ts";
import { ProxyFields } from "../../schema/proxy-fields.ts";
import { compilePathPattern, PATTERN_RULE } from "../../jobs/path-patterns.ts";
import { ChangesAnswer, ChangesOptions } from "../../schema/changes-fields.ts";

export const PAGE_FORMATS = ["markdown", "text", "html", "raw_html", "links", "screenshot", "changes"] as const;
export const WEBHOOK_EVENTS = ["started", "page", "completed", "failed", "cancelled"] as const;

const Formats = v.optional(
  v.pipe(
    v.array(v.picklist(PAGE_FORMATS, `each format must be one of ${PAGE_FORMATS.join(", ")}`), "formats must be an array"),
    v.minLength(1, "formats must not be empty"),
  ),
  ["markdown"],
);

const Pattern = (field: string) =>
  v.pipe(
    v.string(`each of ${field} must be a string`),
    v.maxLength(500, `each of ${field} must be at most 500 characters`),
    v.check((p) => compilePathPattern(p) !== null, `each of ${field} must be ${PATTERN_RULE}`),
  );
const Patterns = (field: string) => v.optional(v.pipe(v.array(Pattern(field), `${field} must be an array`), v.maxLength(50, `${field} takes at most 50 patterns`)), []);

export const Webhook = v.strictObject({
  url: TargetUrl("webhook.url"),
  secret: v.optional(v.pipe(v.string("webhook.secret must be a string"), v.minLength(1, "webhook.secret must not be empty"), v.maxLength(256, "webhook.secret must be at most 256 characters"))),
  events: v.optional(
    v.pipe(v.array(v.picklist(WEBHOOK_EVENTS, `each webhook event must be one of ${WEBHOOK_EVENTS.join(", ")}`), "webhook.events must be an array"), v.minLength(1, "webhook.events must not be empty")),
    [...WEBHOOK_EVENTS],
  ),
}, "webhook must be an object: {url, secret, events}");

const Common = {
  formats: Formats,
  only_main_content: v.optional(v.boolean("only_main_content must be a boolean"), true),
  timeout_ms: v.optional(wholeNumber("timeout_ms", 1000, 60_000), 15_000),
  ...RenderFields,
  ...ProxyFields,
  changes_options: v.optional(ChangesOptions),
  webhook: v.optional(Webhook),
  collection: v.optional(v.pipe(
    v.string("collection must be a string"),
    v.regex(COLLECTION_NAME, "collection must be 1–64 characters of a-z, 0-9, - and _"),
    v.description("The account's collection to index every page read in (POST /v1/collections makes one); a page whose URL is there already replaces it, unless its content is the same"),
  )),
};

export const CrawlBody = v.strictObject({
  url: TargetUrl("url"),
  limit: v.optional(wholeNumber("limit", 1, 10_000), 100),
  max_depth: v.optional(wholeNumber("max_depth", 0, 10), 3),
  include_paths: Patterns("include_paths"),
  exclude_paths: Patterns("exclude_paths"),
  allow_subdomains: v.optional(v.boolean("allow_subdomains must be a boolean"), false),
  allow_external: v.optional(v.boolean("allow_external must be a boolean"), false),
  respect_robots: v.optional(v.boolean("respect_robots must be a boolean"), true),
  sitemap: v.optional(v.pipe(
    v.picklist(["include", "skip", "only"], "sitemap must be include, skip or only"),
    v.description("The site's sitemaps (robots.txt's Sitemap: lines, /sitemap.xml, indexes, gzipped ones): `include` their URLs with the links found (default), `only` their URLs (links on pages are not followed), or `skip` them. Sitemap URLs are at depth 0 and meet the same scope, path and robots.txt rules as links"),
  ), "include"),
  ...Common,
});
export type CrawlRequest = v.InferOutput<typeof CrawlBody>;

export const BatchBody = v.strictObject({
  urls: v.pipe(v.array(TargetUrl("each of urls"), "urls must be an array"), v.minLength(1, "urls must not be empty"), v.maxLength(1000, "urls takes at most 1000 URLs")),
  ...Common,
});
export type BatchRequest = v.InferOutput<typeof BatchBody>;

export const JobAccepted = v.object({ id: v.string(), status: v.string(), status_url: v.string() });

const Nullable = v.nullable(v.string());

const WebhookStatus = v.object({
  url: v.pipe(v.string(), v.description("The webhook URL the job posts to (its secret is never shown)")),
  delivered: v.pipe(Count, v.description("Deliveries the receiver accepted with a 2xx answer")),
  pending: v.pipe(Count, v.description("Deliveries waiting for their first attempt or a retry (5 attempts over about 15 s)")),
  failed: v.pipe(Count, v.description("Deliveries given up after their last attempt failed: the receiver never got those events")),
  last_error: v.pipe(
    v.nullable(v.object({
      event: v.pipe(v.string(), v.description("The event of the failed attempt: started, page, completed, failed or cancelled")),
      at: v.pipe(v.string(), v.description("When the attempt failed (ISO 8601)")),
      error: v.pipe(v.string(), v.description("Why: `http_<status>` when the receiver answered a non-2xx status; `timeout` (no answer in 10 s); `url_not_allowed` (its host does not resolve, or resolves or redirects to a private address); `upstream_error` (connection refused or reset, TLS failure, too many redirects)")),
    })),
    v.description("The most recent failed attempt, whether or not a retry then succeeded; null when none failed"),
  ),
});
export const JobStatusResponse = v.object({
  id: v.string(),
  status: v.picklist(["queued", "running", "completed", "failed", "cancelled"]),
  created_at: v.string(),
  finished_at: Nullable,
  expires_at: Nullable,
  discovered: Count,
  completed: Count,
  failed: Count,
  skipped: Count,
  stopped_reason: v.pipe(Nullable, v.description("Why the job stopped early, or null: limit_reached, quota_exceeded, deadline, site_refused (the start page or 5 pages in a row answered 403, 429 or 503, or robots.txt kept the start page out), site_unreachable (a crawl whose start page, or 5 pages of its site in a row, got no answer at all, their robots.txt fetches included: connection refused or reset, DNS, TLS, timeout; the pages read before are kept, the rest are neither fetched nor counted), storage_full (the account's jobs hold as much as its plan's jobs_storage_bytes allows: the page that found it full is listed as failed with `storage_full`, free; the pages read before are kept) or cancelled")),
  stored_bytes: v.pipe(Count, v.description("Bytes the job's pages and the URLs it found take in the store, counted toward the account's jobs_storage_bytes until the job expires")),
  dropped: v.pipe(
    v.object({
      links: v.pipe(Count, v.description("Links found on its pages past the per-page cap (QUARRY_JOB_PAGE_LINKS new links a page, 1000 by default): not followed")),
      content_bytes: v.pipe(Count, v.description("Bytes of page content left out by the per-page cap (QUARRY_JOB_PAGE_BYTES, 1 MB by default); each page cut names its formats in `truncated`")),
      skipped_urls: v.pipe(Count, v.description("Skipped URLs past the 1,000 a job lists: counted here, not listed")),
      pages: v.pipe(Count, v.description("Pages read but not stored because the account's job storage was full (failed with `storage_full`, not charged)")),
    }),
    v.description("What the job's storage caps left out; all 0 when nothing was"),
  ),
  data: v.array(v.object({
    url: v.string(), status_code: Count, title: Nullable, final_url: v.optional(v.string()),
    markdown: v.optional(v.string()), text: v.optional(v.string()), html: v.optional(v.string()),
    raw_html: v.optional(v.pipe(v.string(), v.description("The page as fetched (or rendered), decoded"))),
    links: v.optional(v.pipe(v.array(v.object({ text: v.string(), url: v.string(), main: v.optional(v.boolean()) })), v.description("Every link of the page, `main` when it stands in the main content"))),
    structured_data: v.optional(v.pipe(v.object({ json_ld: v.array(v.unknown()), microdata: v.array(v.unknown()), open_graph: v.record(v.string(), v.string()) }), v.description("The page's own JSON-LD, microdata and og:* properties, when it states any"))),
    error: v.optional(v.string()),
    rendered: v.optional(v.pipe(v.boolean(), v.description("Whether the page was rendered in a browser"))),
    render_note: v.optional(v.pipe(v.string(), v.description("Why a page that looked like it needed rendering was not rendered"))),
    fetch_path: v.optional(v.pipe(v.array(v.string()), v.description("Each step taken to read the page (api.md §12), as on scrape"))),
    screenshot: v.optional(v.pipe(v.string(), v.description("PNG of the rendered viewport, base64"))),
    changes: v.optional(ChangesAnswer),
    truncated: v.optional(v.pipe(v.array(v.string()), v.description("Formats cut (text formats at a character, `links` to its first links) or left out (a screenshot) so the page's stored content fits QUARRY_JOB_PAGE_BYTES"))),
    index_limit: v.optional(v.pipe(v.picklist(["index_documents", "index_bytes"]), v.description("A page of a job with `collection` that failed with `index_full`: the plan limit indexing it would have passed (the documents or the bytes of text the account's collections hold). Free; the job goes on, and later pages are indexed if they fit"))),
  })),
  failures: v.pipe(v.array(v.object({ url: v.string(), status_code: Count, error: v.string() })), v.description("Every page that failed in this slice, with why (error host_unreachable: not requested, because its host had failed to answer 5 requests of this job in a row)")),
  skipped_urls: v.pipe(v.array(v.object({ url: v.string(), reason: v.string() })), v.description("URLs not fetched: private addresses, robots.txt, URL traps (first 100)")),
  webhook: v.optional(v.pipe(WebhookStatus, v.description("Only for a job started with a `webhook`: what became of its deliveries (one per event sent)"))),
  next: v.pipe(Nullable, v.description("Absolute URL of the next slice of at most 100 pages, or null")),
});

export const JobCancelled = v.object({ id: v.string(), status: v.string() });
