/**
 * A job's failures as Firecrawl's `/errors` lists them: each failed page with a `code` an agent
 * can branch on and an `error` sentence that says what happened and what to do, from the native
 * reason (api.md §9: `http_404`, `timeout`, `unsupported_content`, `robots_disallowed`, …). A
 * reason that is not an HTTP status is never given an `HTTP_…` code (an unsupported page answered
 * 200, a robots.txt refusal was never fetched). A job stopped early (quota, deadline, a site that refused it or stopped answering after some pages) says so in
 * one more entry, since the clients' crawl status has no field for it and reads "completed".
 */
import type { StoppedReason } from "../../ports/job-model.ts";
import { SITE_STOPS } from "../../jobs/site-streaks.ts";
import type { NativeJob } from "../native-jobs.ts";

type Failure = NativeJob["failures"][number];

const SENTENCE: Record<string, string> = {
  timeout: "The page did not answer within the page timeout; raise scrapeOptions.timeout or try again later.",
  unsupported_content: "The page is not HTML, PDF or text (an image, a binary file, or larger than Quarry reads), so there was nothing to read; it cost nothing.",
  url_not_allowed: "The URL leads to a private or reserved address, which Quarry does not fetch.",
  robots_disallowed: "robots.txt disallows this URL for Quarry's crawler, so it was not fetched.",
  robots_unreachable: "The site's robots.txt answered 5xx or could not be fetched, which disallows the whole site; try again when the site is up.",
  upstream_error: "The page could not be reached (connection refused or reset, DNS failure, too many redirects); try again later.",
  host_unreachable: "The page was not requested: its site had stopped answering this job (connections refused or reset, DNS, TLS or timeouts, 5 in a row); it cost nothing. Try again when the site is up.",
  browser_unavailable: "The page needs a browser and this server has none; install Chromium on the server or scrape without waitFor/actions.",
  action_failed: "One of the page actions failed on this page; it cost nothing.",
  blocked: "The site answered with a bot wall (a challenge or captcha page) on every step Quarry could take, the operator's proxies included; it cost nothing. Ask the server's operator for proxies (QUARRY_PROXIES) that the site lets through.",
  storage_full: "The page was read but not kept: this account's crawl and batch jobs hold as much as its plan allows (jobs_storage_bytes); it cost nothing. Room comes back as finished jobs expire.",
};

function httpSentence(status: number): string {
  if (status === 404 || status === 410) return `The page answered HTTP ${status}: it does not exist (any more).`;
  if (status === 403 || status === 429 || status === 503) return `The site refused the crawler with HTTP ${status}; wait before crawling it again.`;
  if (status >= 500) return `The site answered HTTP ${status} (a server error); try again later.`;
  return `The page answered HTTP ${status}; nothing was read from it.`;
}

/** One failed page: `code` is HTTP_<status> for a page that answered an error status, else the reason in capitals. */
export function firecrawlFailure(f: Failure): { code: string; error: string } {
  const http = /^http_(\d{3})$/.exec(f.error);
  if (http) return { code: `HTTP_${http[1]}`, error: httpSentence(Number(http[1])) };
  return { code: f.error.toUpperCase(), error: SENTENCE[f.error] ?? `The page failed: ${f.error}.` };
}

const read = (job: NativeJob) => `${job.completed} ${job.completed === 1 ? "page" : "pages"}`;

const STOPS: Record<string, (job: NativeJob) => string> = {
  quota_exceeded: (job) => `The job stopped after ${read(job)}: the API key's monthly quota ran out. Pages not read cost nothing; the pages read are kept.`,
  site_refused: (job) => `The job stopped after ${read(job)}: the site refused the crawler (robots.txt, or 403, 429 or 503 answers in a row); wait before crawling it again.`,
  site_unreachable: (job) => `The job stopped after ${read(job)}: the site stopped answering (connections refused or reset, DNS, TLS or timeouts, 5 pages in a row); the pages read are kept and the rest were neither fetched nor charged. Try again when the site is up.`,
  storage_full: (job) => `The job stopped after ${read(job)}: this account's crawl and batch jobs hold as much as its plan allows (jobs_storage_bytes); the pages read are kept, the rest were neither fetched nor charged. Room comes back as finished jobs expire.`,
  deadline: (job) => `The job stopped after ${read(job)}: it ran past the server's job deadline (QUARRY_JOB_DEADLINE).`,
};

/** The entry that says why a job stopped early, or null (finished, cancelled by the caller, or its refusing pages already listed). */
export function stopEntry(job: NativeJob): { code: string; error: string; url: string } | null {
  // A site that refused (or never answered) the start page failed the job, and that page's entry says why.
  const say = job.stopped_reason && !(SITE_STOPS.has(job.stopped_reason as StoppedReason) && job.completed === 0) ? STOPS[job.stopped_reason] : undefined;
  if (!say) return null;
  return { code: job.stopped_reason!.toUpperCase(), error: say(job), url: job.data[0]?.url ?? "" };
}
