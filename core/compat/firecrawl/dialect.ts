/**
 * Firecrawl's error answers: `{success: false, error}` with Firecrawl's status codes (401 bad
 * key, 402 credits used up, 408 timeout, 429 rate limit). `@mendable/firecrawl-js` reads
 * `error` as the message and `code` as the error code (v2 `SdkError`; v1 `FirecrawlError`
 * keeps the status). Quarry's code and request id are extra fields.
 */
import type { Dialect } from "../http.ts";

/** Where Firecrawl's status differs from Quarry's own (the rest, 400/401/403/404/429, are the same). */
const STATUS: Record<string, number> = {
  // Firecrawl refuses sites it will not fetch with 403.
  url_not_allowed: 403,
  quota_exceeded: 402,
  timeout: 408,
};

export const firecrawlDialect: Dialect = {
  status: (code, quarryStatus) => STATUS[code] ?? quarryStatus,
  body: (error) => ({ success: false, error: error.message, code: error.code, request_id: error.request_id, ...(error.details ? { details: error.details } : {}) }),
};
