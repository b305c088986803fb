/**
 * Tavily's error answers: `{detail: {error: message}}` with the status codes its clients read
 * (tavily-python: 400 BadRequestError, 401 InvalidAPIKeyError, 403/432/433 ForbiddenError,
 * 429 UsageLimitExceededError; @tavily/core throws an Error with `detail.error` as message).
 * Quarry's code and request id ride inside `detail`: a top-level `error` object with a `code`
 * would make @tavily/core take the answer for its keyless-limit envelope.
 */
import type { Dialect } from "../http.ts";

const STATUS: Record<string, number> = {
  invalid_request: 400,
  missing_auth: 401,
  invalid_auth: 401,
  invalid_key: 401,
  insufficient_scope: 403,
  not_found: 404,
  rate_limited: 429,
  // Tavily's "this request exceeds your plan's set usage limit".
  quota_exceeded: 432,
};

export const tavilyDialect: Dialect = {
  status: (code, quarryStatus) => STATUS[code] ?? quarryStatus,
  body: (error) => ({ detail: { ...error, error: error.message } }),
};
