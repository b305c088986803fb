/**
 * The outermost gateway step: a request id, one structured log line per request, and the
 * X-Request-Id and X-RateLimit-* headers on every response, errors and /health included.
 *
 * It is not Hono middleware in front of every route (issue #33): each route's one handler is
 * wrapped in it (`wrap`), so that Hono takes its single-handler path, without compose, a
 * dispatch and a closure per request. The per-IP bucket and CORS, when configured, run inside
 * it in the same order as before. Paths whose handlers are mounted elsewhere (the dashboard, the
 * docs) take it as middleware (`middleware`); not-found answers are wrapped too. A request wrapped
 * twice (a dashboard path no route matched) is logged and headed once.
 *
 * An answer made with `reply` (a string body and its type, gateway/reply.ts) is made its one
 * Response here, with the gateway headers given to the constructor: setting them on a made
 * Response costs a Headers object and a validation per header, and a Response made by the route
 * and remade here with them was two constructions a request. A reply that leaves through another
 * path (CORS, the middleware below) is made a Response first; any Response gets the headers set
 * on it after, as before.
 */
import type { Context, MiddlewareHandler } from "hono";
import { requestId } from "../ids.ts";
import { LOWEST_PLAN, type PlanTable } from "../limits/plans.ts";
import { periodResetAt } from "../limits/period.ts";
import type { Clock, Logger, Metrics } from "../ports.ts";
import type { AppEnv, AuthInfo, LimitInfo } from "./context.ts";
import { parentOf } from "./internal.ts";
import type { InFlight, InFlightTable } from "./in-flight.ts";
import { type Answer, asResponse, Reply } from "./reply.ts";

/** The month's use of a key so far, for the headers of a request it made that was refused before admission. */
export type UsedSoFar = (keyId: string, now: number) => Promise<number>;

export type GatewayHandler = (c: Context<AppEnv>) => Response | Promise<Response>;
/** What `wrap` takes: a handler whose answer may be a `reply`, made a Response here. */
export type RouteHandler = (c: Context<AppEnv>) => Answer | Promise<Answer>;

export interface GatewayOptions {
  clock: Clock;
  logger: Logger;
  plans: PlanTable;
  metrics?: Metrics;
  inFlight?: InFlightTable;
  usedSoFar?: UsedSoFar;
  /** The app's error handler: what a wrapped handler throws is answered with it, as Hono's compose did. */
  onError: (err: Error, c: Context<AppEnv>) => Response | Promise<Response>;
  /** CORS, when configured: inside this step, before the per-IP bucket (preflights stop there). */
  cors?: MiddlewareHandler<AppEnv>;
  /** The per-IP bucket, when configured: throws its refusal, before the handler. */
  ipCheck?: (c: Context<AppEnv>) => void;
}

export interface WrapOptions {
  /**
   * Set `startedAt` on the context (the compatibility routes read it for their timings). The
   * native routes do without: a fifth variable grows the context's map of them (issue #33).
   */
  startedAt?: boolean;
}

export interface Gateway {
  /** A route's handler with the gateway around it: one Hono handler. */
  wrap(handler: RouteHandler, opts?: WrapOptions): GatewayHandler;
  /** The same as Hono middleware, for paths whose handlers are mounted by others (dashboard, docs). */
  middleware: MiddlewareHandler<AppEnv>;
}

export { reply, replyJson } from "./reply.ts";

export function createGateway(opts: GatewayOptions): Gateway {
  const { clock, logger, metrics, inFlight, usedSoFar, onError } = opts;
  const { cors, ipCheck } = opts;
  const anonymousQuota = opts.plans[LOWEST_PLAN]?.quota ?? null;
  // The X-RateLimit-Reset of one month, and the strings of the common counts, made once.
  let lastReset = { at: -1, until: -1, text: "" };
  const resetAt = (now: number): string => {
    if (now >= lastReset.at && now < lastReset.until) return lastReset.text;
    const text = periodResetAt(now);
    lastReset = { at: now, until: Date.parse(text), text };
    return text;
  };

  /**
   * A request under way: what its log line and headers need, and, as it is, its entry in the
   * in-flight table (one object per request, not two).
   */
  interface Started extends InFlight { parent: Context<AppEnv> | undefined; t0: number; slot: number }

  const begin = (c: Context<AppEnv>, timed = true): Started => {
    const started = clock.now();
    // A request the app sends itself (compatibility routes, MCP tools) shares its parent's id.
    const parent = parentOf(c);
    const id = parent?.get("requestId") ?? requestId(started);
    c.set("requestId", id);
    if (timed) c.set("startedAt", started);
    const req = c.req;
    const s: Started = { req_id: id, method: req.method, path: req.path, started, parent, t0: performance.now(), slot: -1 };
    if (!parent && inFlight) inFlight.add(s);
    return s;
  };

  /**
   * The response that leaves, with the gateway headers; the log line and metrics. Synchronous
   * unless a key refused after it was recognised needs its month's use read (an async function
   * returning into another costs a promise and two turns of the microtask queue per request).
   */
  const finish = (c: Context<AppEnv>, res: Answer, s: Started): Response | Promise<Response> => {
    const auth = c.get("auth");
    const limits = c.get("limits");
    // A key refused after it was recognised (scope, body, query) still has its own plan and use.
    if (!limits && auth && usedSoFar) {
      return knownKeyLimits(auth.plan.quota, auth.key.id, s.started, usedSoFar, resetAt).then((known) => {
        c.set("limits", known);
        return headed(c, res, s, auth, known);
      });
    }
    return headed(c, res, s, auth, limits);
  };

  const headed = (c: Context<AppEnv>, res: Answer, s: Started, auth: AuthInfo | undefined, limits: LimitInfo | undefined): Response => {
    const { req_id: id, parent, started, method, path } = s;
    if (!parent) inFlight?.remove(s);
    // Without a valid key the headers describe the lowest plan's full allowance (api.md §3).
    const quota = limits ? limits.quota : anonymousQuota;
    const limit = quota === null ? "unlimited" : String(quota);
    const remaining = quota === null ? "unlimited" : String(Math.max(0, quota - (limits ? limits.used : 0)));
    const reset = limits ? limits.resetAt : resetAt(started);
    let out: Response;
    // A reply: its one Response, the headers given to its constructor.
    if (res instanceof Reply) out = res.final(id, limit, remaining, reset, method === "HEAD");
    else {
      const h = res.headers;
      h.set("X-Request-Id", id);
      h.set("X-RateLimit-Limit", limit);
      h.set("X-RateLimit-Remaining", remaining);
      h.set("X-RateLimit-Reset", reset);
      // Hono answers HEAD with the GET route's response minus its body, copied from the headers
      // that response was created with; on @hono/node-server that copy misses the ones set above.
      out = method === "HEAD" ? new Response(null, { status: res.status, headers: new Headers(h) }) : res;
    }
    if (parent) {
      // The parent answers the client: it reports the key and limits this request found.
      if (limits) parent.set("limits", limits);
      if (auth) parent.set("auth", auth);
    }
    const seconds = (performance.now() - s.t0) / 1000;
    const status = out.status;
    metrics?.request(c.get("route") ?? (path.startsWith("/dashboard") ? "/dashboard" : "unmatched"), method, status, seconds);
    const durationMs = Math.round(seconds * 10_000) / 10;
    // The status above never reached the client; gone before its answer was ready, it was not charged (gateway/guard.ts).
    const gone = c.get("clientGone") === true;
    const via = parent ? parent.req.path : undefined;
    if (logger.request) logger.request(id, method, path, via, status, durationMs, auth?.key.id, auth?.account.name, gone);
    else {
      // Built field by field, in the line's order (no spread copies per request).
      const line: Record<string, unknown> = { req_id: id, method, path };
      if (via !== undefined) line.via = via;
      line.status = status;
      line.duration_ms = durationMs;
      if (auth) {
        line.key_id = auth.key.id;
        line.account = auth.account.name;
      }
      if (gone) line.client_gone = true;
      logger.info(line, "request");
    }
    return out;
  };

  /** CORS as Hono's compose ran it (a step around the handler), then the handler; the answer is `c.res`. */
  const withCors = async (c: Context<AppEnv>, handler: RouteHandler): Promise<void> => {
    let res: Response | void;
    let failed = false;
    try {
      res = await cors!(c, async () => {
        let inner: Response;
        let innerFailed = false;
        try {
          inner = asResponse(await handler(c));
        } catch (err) {
          if (!(err instanceof Error)) throw err;
          c.error = err;
          inner = await onError(err, c);
          innerFailed = true;
        }
        if (!c.finalized || innerFailed) c.res = inner;
      });
    } catch (err) {
      if (!(err instanceof Error)) throw err;
      c.error = err;
      res = await onError(err, c);
      failed = true;
    }
    if (res !== undefined && (!c.finalized || failed)) c.res = res;
  };

  const wrap = (route: RouteHandler, opts: WrapOptions = {}): GatewayHandler => {
    const timed = opts.startedAt === true;
    // The per-IP bucket before the route's own steps (it throws its refusal, answered below).
    const handler: RouteHandler = ipCheck ? (c) => (ipCheck(c), route(c)) : route;
    if (!cors) {
      return async (c) => {
        // Already inside the gateway (its middleware ran for this path): the handler alone.
        if (c.get("requestId") !== undefined) return asResponse(await handler(c));
        const s = begin(c, timed);
        let res: Answer;
        try {
          // The handler's answer, or the error handler's for what it (or a step before it) threw.
          res = await handler(c);
        } catch (err) {
          try {
            if (!(err instanceof Error)) throw err;
            c.error = err;
            res = await onError(err, c);
          } catch (failed) {
            if (!s.parent) inFlight?.remove(s);
            throw failed;
          }
        }
        return finish(c, res, s);
      };
    }
    return async (c) => {
      if (c.get("requestId") !== undefined) return asResponse(await handler(c));
      const s = begin(c, timed);
      try {
        await withCors(c, handler);
      } catch (err) {
        if (!s.parent) inFlight?.remove(s);
        throw err;
      }
      // CORS sets its headers on the made response: the gateway's go on it too.
      return finish(c, c.res, s);
    };
  };

  const middleware: MiddlewareHandler<AppEnv> = async (c, next) => {
    const s = begin(c);
    const rest: GatewayHandler = async (c) => {
      if (ipCheck) ipCheck(c);
      await next();
      return c.res;
    };
    try {
      if (cors) await withCors(c, rest);
      else {
        try {
          await rest(c);
        } catch (err) {
          if (!(err instanceof Error)) throw err;
          c.error = err;
          c.res = await onError(err, c);
        }
      }
    } finally {
      if (!s.parent) inFlight?.remove(s);
    }
    const out = await finish(c, c.res, s);
    if (out !== c.res) c.res = out;
  };

  return { wrap, middleware };
}

/** A known key's allowance; if its use cannot be read (storage failing), the plan's quota with nothing known used. */
async function knownKeyLimits(quota: number | null, keyId: string, now: number, usedSoFar: UsedSoFar, resetAt: (now: number) => string): Promise<LimitInfo> {
  const used = quota === null ? 0 : await usedSoFar(keyId, now).catch(() => 0);
  return { quota, used, resetAt: resetAt(now) };
}
