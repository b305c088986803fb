/**
 * CORS for browser clients on the origins in QUARRY_CORS_ORIGINS (none by default, so nothing
 * changes unless an operator opts in). It sits right after the request id and before the
 * per-IP bucket and authentication: a preflight is answered here and counts toward nothing.
 * Keys travel in the Authorization header, never in cookies, so credentials stay off.
 */
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "./context.ts";

/** What a browser script may read from an answer besides the safelisted headers. */
export const EXPOSED_HEADERS = ["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"];

/** `origins` are normalised origins (`https://app.example`), or `["*"]` for any. */
export function corsGate(origins: readonly string[]): MiddlewareHandler<AppEnv> {
  return cors({
    origin: origins.includes("*") ? "*" : [...origins],
    allowMethods: ["GET", "POST", "PATCH", "DELETE"],
    allowHeaders: ["Authorization", "Content-Type"],
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
}
