/**
 * The outermost middleware: a request id, one structured log line per request, and the
 * X-Request-Id and X-RateLimit-* headers on every response, errors and /health included.
 */
import type { MiddlewareHandler } from "hono";
import { requestId } from "../ids.ts";
import { LOWEST_PLAN, type PlanTable } from "../limits/plans.ts";
import { periodResetAt } from "../limits/period.ts";
import type { Clock, Logger, Metrics } from "../ports.ts";
import type { AppEnv, LimitInfo } from "./context.ts";
import { parentOf } from "./internal.ts";

/** A request being answered, for a stopping server to name the ones it cuts off. */
export interface InFlight {
  req_id: string;
  method: string;
  path: string;
  started: number;
}

/** The month's use of a key so far, for the headers of a request it made that was refused before admission. */
export type UsedSoFar = (keyId: string, now: number) => Promise<number>;

export function gatewayHeaders(clock: Clock, logger: Logger, plans: PlanTable, metrics?: Metrics, inFlight?: Map<string, InFlight>, usedSoFar?: UsedSoFar): MiddlewareHandler<AppEnv> {
  const anonymousQuota = plans[LOWEST_PLAN]?.quota ?? null;
  return async (c, next) => {
    const started = clock.now();
    // A request the app sends itself (compatibility routes, MCP tools) shares its parent's id.
    const parent = parentOf(c);
    const id = parent?.get("requestId") ?? requestId(started);
    c.set("requestId", id);
    c.set("startedAt", started);
    const t0 = performance.now();
    if (!parent) inFlight?.set(id, { req_id: id, method: c.req.method, path: c.req.path, started });
    try {
      await next();
    } finally {
      if (!parent) inFlight?.delete(id);
    }
    const auth = c.get("auth");
    // A key refused after it was recognised (scope, body, query) still has its own plan and use.
    if (!c.get("limits") && auth && usedSoFar) c.set("limits", await knownKeyLimits(auth.plan.quota, auth.key.id, started, usedSoFar));
    // Without a valid key the headers describe the lowest plan's full allowance (api.md §3).
    const limits = c.get("limits") ?? { quota: anonymousQuota, used: 0, resetAt: periodResetAt(started) };
    const h = c.res.headers;
    h.set("X-Request-Id", id);
    h.set("X-RateLimit-Limit", limits.quota === null ? "unlimited" : String(limits.quota));
    h.set("X-RateLimit-Remaining", limits.quota === null ? "unlimited" : String(Math.max(0, limits.quota - limits.used)));
    h.set("X-RateLimit-Reset", limits.resetAt);
    if (c.req.method === "HEAD") {
      // Hono answers HEAD with the GET route's response minus its body, copied from the headers
      // that response was created with; on @hono/node-server that copy misses the ones set above.
      c.res = new Response(null, { status: c.res.status, headers: new Headers(h) });
    }
    if (parent) {
      // The parent answers the client: it reports the key and limits this request found.
      if (c.get("limits")) parent.set("limits", c.get("limits"));
      if (auth) parent.set("auth", auth);
    }
    const seconds = (performance.now() - t0) / 1000;
    const method = c.req.method;
    const status = c.res.status;
    metrics?.request(c.get("route") ?? (c.req.path.startsWith("/dashboard") ? "/dashboard" : "unmatched"), method, status, seconds);
    // Built field by field, in the line's order (no spread copies per request).
    const line: Record<string, unknown> = { req_id: id, method, path: c.req.path };
    if (parent) line.via = parent.req.path;
    line.status = status;
    line.duration_ms = Math.round(seconds * 10_000) / 10;
    if (auth) {
      line.key_id = auth.key.id;
      line.account = auth.account.name;
    }
    // The status above never reached the client; gone before its answer was ready, it was not charged (gateway/guard.ts).
    if (c.get("clientGone")) line.client_gone = true;
    logger.info(line, "request");
  };
}

/** A known key's allowance; if its use cannot be read (storage failing), the plan's quota with nothing known used. */
async function knownKeyLimits(quota: number | null, keyId: string, now: number, usedSoFar: UsedSoFar): Promise<LimitInfo> {
  const used = quota === null ? 0 : await usedSoFar(keyId, now).catch(() => 0);
  return { quota, used, resetAt: periodResetAt(now) };
}
