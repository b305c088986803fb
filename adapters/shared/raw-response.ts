/**
 * Whole HTTP/1.1 error responses written straight to a socket, for requests the app never
 * sees: ones the HTTP parser rejects, ones that time out, and connections over a cap. They
 * carry the same JSON error shape and headers as the app's own errors.
 */
import type { Config } from "../../core/config.ts";
import { requestId } from "../../core/ids.ts";
import { LOWEST_PLAN } from "../../core/limits/plans.ts";
import { periodResetAt } from "../../core/limits/period.ts";

const REASONS: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  413: "Payload Too Large",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  503: "Service Unavailable",
};

export interface RawError {
  status: number;
  code: string;
  message: string;
  retryAfter?: number;
}

/** The response bytes and the request id they carry. */
export function rawErrorResponse(config: Pick<Config, "plans">, err: RawError, now = Date.now()): { id: string; bytes: string } {
  const id = requestId(now);
  const error: Record<string, unknown> = { code: err.code, message: err.message, request_id: id };
  if (err.retryAfter !== undefined) error.retry_after = err.retryAfter;
  const body = JSON.stringify({ error });
  const quota = config.plans[LOWEST_PLAN]?.quota ?? null;
  const headers = [
    `HTTP/1.1 ${err.status} ${REASONS[err.status] ?? "Error"}`,
    "Content-Type: application/json",
    `Content-Length: ${new TextEncoder().encode(body).length}`,
    "Connection: close",
    `X-Request-Id: ${id}`,
    `X-RateLimit-Limit: ${quota === null ? "unlimited" : quota}`,
    `X-RateLimit-Remaining: ${quota === null ? "unlimited" : quota}`,
    `X-RateLimit-Reset: ${periodResetAt(now)}`,
    ...(err.retryAfter !== undefined ? [`Retry-After: ${err.retryAfter}`] : []),
  ];
  return { id, bytes: `${headers.join("\r\n")}\r\n\r\n${body}` };
}
