/**
 * The backend interface, shaped like a SearXNG engine: an `about` block, a pure request
 * builder and a pure response parser. The runner (`runner.ts`) does all I/O, timing and
 * failure bookkeeping, so a backend module is ~100 lines that can be tested on recorded
 * payloads alone.
 */

export type BackendKind = "web" | "video" | "social";
export type Credential = "key" | "token" | "url";
export type Freshness = "day" | "week" | "month" | "year";

export interface BackendAbout {
  /** Stable id: used in `QUARRY_<ID>_URL`, request `backends` fields and health (api.md §1). */
  id: string;
  kind: BackendKind;
  /**
   * The public upstream (scheme, host and optional path prefix), or null when there is none
   * (SearXNG is always operator-hosted). May contain `{lang}`, replaced by the query's primary
   * language subtag (Wikipedia has one host per language).
   */
  defaultBaseUrl: string | null;
  /** What the operator must configure before the backend can run. */
  needs?: readonly Credential[];
  /** The upstream's documentation, for operators and reviewers. */
  docs: string;
  /** What the upstream can narrow a search by beyond the query and language; absent: nothing. */
  supports?: BackendSupports;
}

/**
 * Search options an upstream honours itself (api.md §8). Whatever a backend lacks, the search
 * operation names in `meta.ignored`; date ranges are applied to dated results afterwards anyway.
 */
export interface BackendSupports {
  /** Has a news vertical (`topic: news`); backends without one are skipped for news. */
  news?: boolean;
  /** ISO 3166-1 alpha-2 codes (upper case) it can search in, or `any`. */
  countries?: readonly string[] | "any";
  /** `exact`: takes a from–to date range; `window`: only day/week/month/year. */
  dates?: "exact" | "window";
}

export type Topic = "general" | "news";

export interface BackendQuery {
  query: string;
  /** How many results to ask the upstream for; parsers never return more. */
  maxResults: number;
  /** BCP-47 tag, e.g. `en` or `de-AT`. */
  language: string;
  freshness: Freshness | null;
  /** 1-based result page. */
  page?: number;
  /** Default `general`; `news` asks the upstream's news vertical. */
  topic?: Topic;
  /** ISO 3166-1 alpha-2, upper case: search as from this country (backends that support it). */
  country?: string;
  /** Inclusive publication dates, YYYY-MM-DD, for backends with `supports.dates: "exact"`. */
  dateRange?: { from: string; to: string };
}

/** A backend's resolved settings (registry.ts fills defaults; core never reads env). */
export interface BackendConfig {
  /** Replaces scheme, host, port and path prefix of the upstream; no trailing slash. */
  baseUrl: string;
  key?: string;
  token?: string;
}

export interface RawResult {
  title: string;
  url: string;
  content: string;
  /** ISO 8601 UTC, or null when the upstream gives no exact date. */
  published_at: string | null;
  /** 1-based position within this backend's answer. */
  rank: number;
  /** An image the upstream shows for this result (thumbnail), absolute URL. */
  image?: string;
  /** The site's icon as the upstream gives it, absolute URL. */
  favicon?: string;
}

export type ErrorClass =
  | "captcha"
  | "blocked"
  | "rate_limited"
  | "http"
  | "parse"
  | "network"
  | "timeout";

export interface BackendError {
  class: ErrorClass;
  message: string;
  retryAfterSeconds?: number;
}

/** Web backends yield RawResult; video and social backends yield their own item types. */
export type ParseOutcome<T = RawResult> =
  | { ok: true; results: T[] }
  | { ok: false; error: BackendError };

/** What the runner hands a parser: the upstream's answer with the body already read. */
export interface UpstreamResponse {
  status: number;
  headers: Headers;
  body: string;
}

export interface Backend<T = RawResult> {
  about: BackendAbout;
  /** Builds the upstream request. No I/O. */
  buildRequest(query: BackendQuery, cfg: BackendConfig): Request;
  /** Turns the upstream's answer into results or a classified failure. Pure; never throws. */
  parseResponse(res: UpstreamResponse, query: BackendQuery): ParseOutcome<T>;
}
