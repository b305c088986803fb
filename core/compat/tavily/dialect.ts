/**
 * Tavily's error answers: `{detail: {error: message}}` with the status codes its clients read
 * (tavily-python: 400 BadRequestError, 401 InvalidAPIKeyError, 403/432/433 ForbiddenError,
 * 429 UsageLimitExceededError; @tavily/core throws an Error with `detail.error` as message).
 * Quarry's code and request id ride inside `detail`: a top-level `error` object with a `code`
 * would make @tavily/core take the answer for its keyless-limit envelope.
 */
import type { Dialect } from "../http.ts";

/** Where Tavily's status differs from Quarry's own (the rest, 400/401/403/404/429, are the same). */
const STATUS: Record<string, number> = {
  // Tavily's "this request exceeds your plan's set usage limit".
  quota_exceeded: 432,
};

export const tavilyDialect: Dialect = {
  status: (code, quarryStatus) => STATUS[code] ?? quarryStatus,
  body: (error) => ({ detail: { ...error, error: error.message } }),
};
