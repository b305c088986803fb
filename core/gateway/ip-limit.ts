/** The per-client-IP token bucket in front of everything (spec: Other limits; api.md §3). */
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors.ts";
import { retryAfterSeconds } from "../limits/sliding-window.ts";
import { TokenBuckets, type BucketConfig } from "../limits/token-bucket.ts";
import type { Clock, Ports } from "../ports.ts";
import type { AppEnv } from "./context.ts";

export function clientIp(req: Request, env: unknown, ports: Ports, trustProxy: boolean): string {
  if (trustProxy) {
    // The right-most entry is the one our own proxy appended; entries left of it are client-supplied.
    const xff = req.headers.get("x-forwarded-for");
    const last = xff?.split(",").map((s) => s.trim()).filter(Boolean).pop();
    if (last) return last;
  }
  return ports.remoteAddress?.(req, env) ?? "unknown";
}

export function ipLimit(cfg: BucketConfig, clock: Clock, ports: Ports, trustProxy: boolean): MiddlewareHandler<AppEnv> {
  const buckets = new TokenBuckets(cfg);
  return async (c, next) => {
    const waitMs = buckets.take(clientIp(c.req.raw, c.env, ports, trustProxy), clock.now());
    if (waitMs > 0) {
      const retryAfter = retryAfterSeconds(waitMs);
      throw new ApiError("rate_limited", `Too many requests from this address (limit ${cfg.ratePerSecond} per second, burst ${cfg.burst}).`, {
        retryAfter,
        headers: { "Retry-After": String(retryAfter) },
      });
    }
    await next();
  };
}
