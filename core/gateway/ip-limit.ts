/** The per-client-IP token bucket in front of everything (spec: Other limits; api.md §3). */
import type { Context } from "hono";
import { ApiError } from "../errors.ts";
import { retryAfterSeconds } from "../limits/sliding-window.ts";
import { TokenBuckets, type BucketConfig } from "../limits/token-bucket.ts";
import type { Clock, Ports } from "../ports.ts";
import type { AppEnv } from "./context.ts";
import { parentOf } from "./internal.ts";
import { clientAddress, type TrustProxy } from "../net/trusted-proxies.ts";

export function clientIp(req: Request, env: unknown, ports: Ports, trustProxy: TrustProxy): string {
  return clientAddress(trustProxy, ports.remoteAddress?.(req, env), req.headers.get("x-forwarded-for")) ?? "unknown";
}

/**
 * Takes a token from the client address's bucket, or throws the refusal. A plain call inside the
 * gateway's one step (gateway/headers.ts), not a Hono middleware of its own (issue #33).
 */
export function ipCheck(cfg: BucketConfig, clock: Clock, ports: Ports, trustProxy: TrustProxy): (c: Context<AppEnv>) => void {
  const buckets = new TokenBuckets(cfg);
  return (c) => {
    // A request the app sends itself was counted when its parent came in.
    if (parentOf(c)) return;
    const waitMs = buckets.take(clientIp(c.req.raw, c.env, ports, trustProxy), clock.now());
    if (waitMs > 0) {
      const retryAfter = retryAfterSeconds(waitMs);
      throw new ApiError("rate_limited", `Too many requests from this address (limit ${cfg.ratePerSecond} per second, burst ${cfg.burst}).`, {
        retryAfter,
        headers: { "Retry-After": String(retryAfter) },
      });
    }
  };
}
