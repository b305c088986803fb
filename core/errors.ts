/**
 * The error-code table: one place maps every code to its HTTP status. Handlers throw
 * `ApiError`; the app's error handler turns it into the spec's error object.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  missing_auth: 401,
  invalid_auth: 401,
  invalid_key: 401,
  insufficient_scope: 403,
  index_full: 403,
  too_many_monitors: 403,
  not_found: 404,
  collection_exists: 409,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  url_not_allowed: 422,
  unsupported_content: 422,
  action_failed: 422,
  model_unavailable: 422,
  rate_limited: 429,
  quota_exceeded: 429,
  too_many_jobs: 429,
  job_storage_full: 429,
  internal_error: 500,
  upstream_error: 502,
  blocked: 502,
  service_unavailable: 503,
  browser_unavailable: 503,
  timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * Errors that refuse a request rather than answer it: like the gateway's own refusals (400,
 * 401, 403, 429), they count toward no quota, even when an operation raises them after
 * admission (a private URL, a platform this server does not have). So do the 422s of a scrape
 * that gives nothing (content it cannot read, an action the page could not do, a format that
 * needs a model on a server without one), as a crawl's
 * page failing for those reasons costs nothing; and a page that stayed behind a bot wall
 * (`blocked`, api.md §12): nothing was read.
 */
export const REFUSALS: ReadonlySet<ErrorCode> = new Set(["invalid_request", "url_not_allowed", "not_found", "unsupported_content", "action_failed", "model_unavailable", "collection_exists", "index_full", "too_many_monitors", "blocked"]);

export interface FieldIssue {
  field: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    /** Public message: the only text that leaves the process. */
    message: string,
    readonly extra: {
      retryAfter?: number;
      details?: FieldIssue[];
      headers?: Record<string, string>;
      /** Extra fields of the error object, e.g. each backend's status behind a 502. */
      fields?: Record<string, unknown>;
    } = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

/** Thrown by storage adapters when the database cannot be reached; mapped to 503. */
export class StorageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StorageError";
  }
}

/** At most `max` characters of a caller's input (an id, a path) for a message, with "…" when cut. */
export function echoed(input: string, max = 64): string {
  // Cut on characters (one or two code units each); only the first 2 × max code units are looked at.
  const head = Array.from(input.slice(0, max * 2)).slice(0, max).join("");
  return head.length === input.length ? input : `${head}…`;
}

export function errorBody(err: ApiError, requestId: string) {
  const error: Record<string, unknown> = { ...err.extra.fields, code: err.code, message: err.message, request_id: requestId };
  if (err.extra.retryAfter !== undefined) error.retry_after = err.extra.retryAfter;
  if (err.extra.details?.length) error.details = err.extra.details;
  return { error };
}

/** Any thrown value as an ApiError: storage outages become 503, everything else a generic 500. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof StorageError) {
    return new ApiError("service_unavailable", "Storage is unavailable (the database, Redis or the disk); try again shortly.");
  }
  return new ApiError("internal_error", "Internal error; the details are logged under this request id.");
}
