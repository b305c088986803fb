/**
 * What the job engine tells the metrics port (GET /metrics): each recorded page as one of a fixed
 * set of outcomes, so a page's URL, host or exact error never becomes a label. The job's own
 * status keeps the exact error code (`http_404`, `upstream_error`, …); the outcome only groups them.
 */
import type { PageResult } from "../ports/job-model.ts";
import { HOST_DOWN } from "./site-streaks.ts";

export const PAGE_OUTCOMES = ["ok", "http_4xx", "http_5xx", "timeout", "unreachable", "robots", "host_down", "unsupported", "blocked", "other"] as const;
export type PageOutcome = (typeof PAGE_OUTCOMES)[number];

/**
 * - `ok`: read; `http_4xx` / `http_5xx`: the site answered with that class of status;
 * - `timeout`: no whole answer within the page's timeout (or a rendered page's wait ran out);
 * - `unreachable`: no HTTP answer at all (connection refused or reset, DNS, TLS);
 * - `robots`: robots.txt keeps it out (or could not be read, so everything is kept out);
 * - `host_down`: not requested, its host having failed to answer too many times in a row for the job;
 * - `unsupported`: a content type that cannot be read, or a body past the size limit;
 * - `blocked`: a bot wall on every step (api.md §12), whatever the wall's status;
 * - `other`: anything else (too many redirects, a redirect to a private address, a browser error).
 */
export function pageOutcome(page: PageResult, unreachable: boolean): PageOutcome {
  if (page.ok) return "ok";
  const error = page.error ?? "";
  if (error === HOST_DOWN) return "host_down";
  if (error.startsWith("robots_")) return "robots";
  if (error === "blocked") return "blocked";
  if (page.statusCode >= 500) return "http_5xx";
  if (page.statusCode >= 400) return "http_4xx";
  if (error === "timeout") return "timeout";
  if (unreachable) return "unreachable";
  if (error === "unsupported_content") return "unsupported";
  return "other";
}
