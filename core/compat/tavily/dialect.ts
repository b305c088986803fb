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

/**
 * Tavily's clients may send the key as the body's `api_key` (tavily-python's older versions do):
 * the gateway's words name only the Authorization header, which such a client never sent.
 */
const KEY_WORDS: Record<string, string> = {
  missing_auth: "Missing API key; send 'Authorization: Bearer <API key>' or the key as the body's api_key.",
  invalid_auth: "Malformed api_key; expected 'qry_' followed by 64 lowercase hex characters.",
};

export const tavilyDialect: Dialect = {
  status: (code, quarryStatus) => STATUS[code] ?? quarryStatus,
  body: (error) => ({ detail: { ...error, error: error.message } }),
  reword(error, request) {
    // Only a POST has a body to carry the key; without a header, the key the gateway saw was api_key.
    if (request.method !== "POST" || request.headers.get("authorization")?.trim()) return error;
    if (error.code === "missing_auth" || error.code === "invalid_auth") return { ...error, message: KEY_WORDS[error.code]! };
    return error;
  },
};
