/**
 * Requests the app sends to itself: a compatibility route or an MCP tool call translates its
 * request into the native one and sends it through the app again, so it passes exactly the
 * gateway the native endpoint passes (auth, scope, per-minute limit, quota, usage group).
 *
 * Such a request carries its parent's context in the Hono `env`, under a symbol only this
 * module holds: no client can forge it with a header. The gateway uses it to keep one request
 * id for both, to skip the per-IP bucket the parent already passed, and to hand the key and
 * limits it found back to the parent, whose answer then carries the right X-RateLimit headers.
 */
import type { Context } from "hono";
import type { AppEnv } from "./context.ts";

const PARENT = Symbol("quarry.parent");

export interface InternalEnv {
  [PARENT]: Context<AppEnv>;
}

export function internalEnv(parent: Context<AppEnv>): InternalEnv {
  return { [PARENT]: parent };
}

/** The context of the request that sent this one, or undefined for a request from outside. */
export function parentOf(c: Context<AppEnv>): Context<AppEnv> | undefined {
  const env: unknown = c.env;
  if (typeof env !== "object" || env === null || !(PARENT in env)) return undefined;
  return (env as InternalEnv)[PARENT];
}
