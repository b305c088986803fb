/** /v1/crawl and /v1/batch/scrape: site-level work as durable jobs (api.md §9). */
import type { Context } from "hono";
import type { AppDeps, AppEnv } from "../../gateway/context.ts";
import { skipParam } from "../../gateway/query.ts";
import type { RouteDef } from "../../gateway/route.ts";
import type { JobKind } from "../../ports/job-model.ts";
import { cancelJob, jobStatus, startBatch, startCrawl, type JobCaller } from "./crawl.ts";
import { jobEvents } from "./events.ts";
import { BatchBody, CrawlBody, JobAccepted, JobCancelled, JobStatusResponse, type BatchRequest, type CrawlRequest } from "./schema.ts";
import * as v from "valibot";

function caller(c: Context<AppEnv>): JobCaller {
  const auth = c.get("auth")!;
  return { account: auth.account.name, keyId: auth.key.id, plan: auth.plan };
}

const skipOf = (c: Context<AppEnv>) => skipParam(c, "pages");

const SKIP = { skip: "Pages to skip: each answer holds at most 100 pages; pass the number already read (or follow `next`) to get the next ones." };

const Events = v.pipe(v.string(), v.description("text/event-stream: `page` and `status` events until the job ends"));

export function jobRoutes({ services, config }: AppDeps): RouteDef[] {
  const base = (c: Context<AppEnv>) => config.jobs.publicUrl ?? new URL(c.req.url).origin;
  const jobErrors = ["not_found"] as const;
  const perKind = (kind: JobKind, prefix: string, noun: string): RouteDef[] => [
    {
      method: "GET", path: `${prefix}/:id`, operationId: `${kind === "crawl" ? "crawl" : "batchScrape"}Status`,
      summary: `Read a ${noun}: status, counts and up to 100 pages`,
      description: `The ${noun}'s status (queued, running, completed, failed, cancelled), its counts, why it stopped early if it did, and its pages in the order they were read, at most 100 per answer: \`next\` is the absolute URL of the following slice. Failed pages are listed with their reason; URLs not fetched (private addresses, robots.txt, URL traps) in \`skipped_urls\`. A job started with a \`webhook\` has \`webhook\`: how many of its deliveries the receiver accepted, how many wait for a retry, how many were given up after 5 attempts, and why the last failed attempt failed (\`http_500\`, \`timeout\`, \`url_not_allowed\`…); never the secret. Another account's job is a 404. Not metered.`,
      auth: true, scope: "scrape", group: null, params: { id: `The job id, ${kind}_<ulid>` }, query: SKIP, status: 200, response: JobStatusResponse, errors: [...jobErrors, "invalid_request"],
      handler: async (c) => c.json(await jobStatus(services, caller(c), kind, c.req.param("id") ?? "", skipOf(c), base(c))),
    },
    {
      method: "DELETE", path: `${prefix}/:id`, operationId: `${kind === "crawl" ? "crawl" : "batchScrape"}Cancel`,
      summary: `Cancel a ${noun}`,
      description: `Stops a queued or running ${noun} at once: pages being fetched are abandoned and nothing more is fetched or counted. What it read so far stays readable. A finished job answers with its final status. Not metered.`,
      auth: true, scope: "scrape", group: null, params: { id: `The job id, ${kind}_<ulid>` }, status: 200, response: JobCancelled, errors: [...jobErrors],
      handler: async (c) => c.json(await cancelJob(services, caller(c), kind, c.req.param("id") ?? "")),
    },
    {
      method: "GET", path: `${prefix}/:id/events`, operationId: `${kind === "crawl" ? "crawl" : "batchScrape"}Events`,
      summary: `Follow a ${noun} as Server-Sent Events`,
      description: `A text/event-stream of \`page\` events (one per page recorded, its sequence number as the event id) and \`status\` events (counts and status) until the ${noun} ends. Reconnect with Last-Event-ID to continue. Not metered.`,
      auth: true, scope: "scrape", group: null, params: { id: `The job id, ${kind}_<ulid>` }, status: 200, response: Events, alsoProduces: ["text/event-stream"], errors: [...jobErrors],
      handler: (c) => jobEvents(c, services, caller(c), kind, c.req.param("id") ?? ""),
    },
  ];
  return [
    {
      method: "POST", path: "/v1/crawl", operationId: "crawl",
      summary: "Crawl a site as a durable job: every page as markdown, text, HTML or links",
      description:
        "Starts a job that reads a site from `url`, following its links within `max_depth`, `limit`, `include_paths`/`exclude_paths` (regular expressions on the path), and the same host unless `allow_subdomains`/`allow_external`. It obeys robots.txt and Crawl-delay for the user agent Quarry, sends at most 2 requests at a time to a host, skips private addresses and URL traps and reports them. A `url` or `webhook.url` Quarry will not reach (another scheme than http(s), a private address) is a 422 `url_not_allowed` naming the field, and costs nothing. Answers 202 with the job id; poll `status_url`, follow `/events`, or give a `webhook` (signed with `X-Quarry-Signature: sha256=<HMAC-SHA256 of the body>` when it has a `secret`). One unit of the `crawl` group per page read successfully; a job that runs out of quota stops with `stopped_reason: quota_exceeded` and keeps what it has. A site that stops answering (the start page, or 5 of its pages in a row, with no answer at all: connection refused or reset, DNS, TLS, timeout) ends the crawl with `stopped_reason: site_unreachable`, keeping what it read; its remaining pages are neither fetched nor counted.",
      example: { url: "https://example.org/docs/", limit: 50, max_depth: 2, formats: ["markdown"] },
      auth: true, scope: "scrape", group: null, body: CrawlBody, status: 202, response: JobAccepted, errors: ["url_not_allowed", "quota_exceeded", "too_many_jobs", "job_storage_full"],
      handler: async (c) => c.json(await startCrawl(services, caller(c), c.get("body") as CrawlRequest, base(c)), 202),
    },
    ...perKind("crawl", "/v1/crawl", "crawl"),
    {
      method: "POST", path: "/v1/batch/scrape", operationId: "batchScrape",
      summary: "Scrape many URLs as one durable job",
      description:
        "Starts a job that reads each of `urls` (up to 1000) as POST /v1/scrape would, with the same formats and extraction. Private addresses are skipped and reported; an entry with another scheme than http(s) refuses the batch with 422 `url_not_allowed` naming it (`urls.3`), and costs nothing. Answers 202; read it at `status_url` (the same shape as a crawl), follow `/events`, or give a `webhook`. One unit of the `crawl` group per page read successfully. A host that fails to answer 5 of the batch's requests in a row (connection refused or reset, DNS, TLS, timeout) is down for the batch: its remaining URLs fail at once with `host_unreachable`, unfetched and free, while the other hosts' URLs are read.",
      example: { urls: ["https://example.org/a", "https://example.org/b"], formats: ["markdown"] },
      auth: true, scope: "scrape", group: null, body: BatchBody, status: 202, response: JobAccepted, errors: ["url_not_allowed", "quota_exceeded", "too_many_jobs", "job_storage_full"],
      handler: async (c) => c.json(await startBatch(services, caller(c), c.get("body") as BatchRequest, base(c)), 202),
    },
    ...perKind("batch", "/v1/batch/scrape", "batch scrape"),
  ];
}
