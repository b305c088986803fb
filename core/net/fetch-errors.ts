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
 */
import { ApiError, type ErrorCode } from "../errors.ts";
import type { RefusalReason } from "./url-policy.ts";

export type PageFetchFailure = "egress_refused" | "timeout" | "body_too_large" | "too_many_redirects" | "network";

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
  /** `message` says what the time went on when it was not the fetch (a rendered page's wait_for). */
  constructor(readonly url: string, readonly timeoutMs: number, message?: string) {
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
  constructor(message: string, internal?: string, options?: { cause?: unknown }) {
    super("upstream_error", message, internal);
    this.name = "UpstreamNetworkError";
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

export function isPageFetchError(err: unknown): err is PageFetchError {
  return err instanceof PageFetchError;
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}
