/**
 * The ways a page fetch fails, as `ApiError`s: a route that lets one propagate answers with the
 * right code (api.md §4) and the public message; operations that fetch many pages (search tiers,
 * research) catch `PageFetchError` and record the page as failed. `internal` is for the log only.
 *
 * | error               | code                 | status |
 * |---------------------|----------------------|--------|
 * | EgressRefused       | url_not_allowed      | 422    |
 * | FetchTimeout        | timeout              | 504    |
 * | BodyTooLarge        | unsupported_content  | 422    |
 * | TooManyRedirects    | upstream_error       | 502    |
 * | UpstreamNetworkError| upstream_error       | 502    |
 * | Blocked             | blocked              | 502    |
 *
 * `unreachable` (siteUnreachable) tells the failures that say the host itself cannot be reached
 * (refused or reset connections, DNS, TLS, a plain timeout) from those of one page (a corrupt body,
 * a bad redirect, a wait_for that never matched): a crawl whose site keeps failing so stops early.
 */
import { ApiError, type ErrorCode } from "../errors.ts";
import type { RefusalReason } from "./url-policy.ts";
import { describeBlock, type Block } from "./blocks.ts";

export type PageFetchFailure = "egress_refused" | "timeout" | "body_too_large" | "too_many_redirects" | "network" | "blocked";

export abstract class PageFetchError extends ApiError {
  abstract readonly failure: PageFetchFailure;
  constructor(code: ErrorCode, message: string, readonly internal: string = message) {
    super(code, message);
  }
}

export class EgressRefused extends PageFetchError {
  readonly failure = "egress_refused";
  constructor(message: string, readonly reason: RefusalReason, internal?: string) {
    super("url_not_allowed", message, internal);
    this.name = "EgressRefused";
  }
}

export class FetchTimeout extends PageFetchError {
  readonly failure = "timeout";
  /**
   * `message` says what the time went on when it was not the fetch (a rendered page's wait_for).
   * `reaching`: the time went on reaching the page (connecting, waiting for its answer), not on a
   * loaded page's waits or Quarry's own queue for the browser.
   */
  constructor(readonly url: string, readonly timeoutMs: number, message?: string, readonly reaching: boolean = message === undefined) {
    super("timeout", message ?? `Fetching ${url} took longer than ${timeoutMs} ms.`);
    this.name = "FetchTimeout";
  }
}

export class BodyTooLarge extends PageFetchError {
  readonly failure = "body_too_large";
  constructor(readonly url: string, readonly limit: number, readonly bytesSeen: number) {
    super("unsupported_content", `The page at ${url} is larger than ${formatBytes(limit)} (after decompression); Quarry stops reading there.`);
    this.name = "BodyTooLarge";
  }
}

export class TooManyRedirects extends PageFetchError {
  readonly failure = "too_many_redirects";
  constructor(readonly url: string, readonly max: number) {
    super("upstream_error", `${url} redirected more than ${max} times.`);
    this.name = "TooManyRedirects";
  }
}

export class UpstreamNetworkError extends PageFetchError {
  readonly failure = "network";
  /** The host could not be reached at all (refused, reset, unreachable, DNS, TLS), as opposed to one page failing. */
  readonly unreachable: boolean;
  /** The proxy the fetch went through failed (could not be reached, refused us), not the site: another proxy may do. */
  readonly proxySide: boolean;
  constructor(message: string, internal?: string, options?: { cause?: unknown; unreachable?: boolean; proxySide?: boolean }) {
    super("upstream_error", message, internal);
    this.name = "UpstreamNetworkError";
    this.unreachable = options?.unreachable ?? false;
    this.proxySide = options?.proxySide ?? false;
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

/**
 * The site answered with a bot wall (core/net/blocks.ts) on every step Quarry could take: nothing
 * of the page was read. Free (REFUSALS), never returned as the page's content, and it counts
 * toward the host's streak as an unreachable site does. `fetchPath` is what was tried.
 */
export class Blocked extends PageFetchError {
  readonly failure = "blocked";
  constructor(readonly url: string, readonly block: Block, readonly fetchPath: string[], hint = "") {
    super("blocked", `${new URL(url).host} answered with a bot wall (${describeBlock(block)}); Quarry did not get the page.${hint ? ` ${hint}` : ""}`);
    this.name = "Blocked";
    (this.extra as { fields?: Record<string, unknown> }).fields = { blocked_by: block.vendor, fetch_path: fetchPath };
  }
}

/** Socket error codes that say the host cannot be reached (not that one page went wrong). */
export function unreachableCode(code: string): boolean {
  return /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|EHOSTDOWN|ENOTFOUND|EAI_AGAIN|EAI_NODATA|UND_ERR_CONNECT_TIMEOUT|UND_ERR_SOCKET)$/.test(code) ||
    /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code);
}

/**
 * Whether a page's failure says its host is unreachable: a refused, reset or unreachable
 * connection, a name that does not resolve, a TLS handshake refused, or a fetch that timed out
 * (not a rendered page's waits, nor a wait for the browser). An HTTP answer of any status is not.
 */
export function siteUnreachable(err: unknown): boolean {
  if (err instanceof FetchTimeout) return err.reaching;
  if (err instanceof UpstreamNetworkError) return err.unreachable;
  if (err instanceof EgressRefused) return err.reason === "unresolvable";
  // A wall in front of the whole site: its pages will not be read either (api.md §12).
  return err instanceof Blocked;
}

export function isPageFetchError(err: unknown): err is PageFetchError {
  return err instanceof PageFetchError;
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** A failed request's short public code, as a job records it: the error's own code, else `upstream_error`. */
export function failureCode(err: unknown): string {
  return err instanceof ApiError ? err.code : "upstream_error";
}
