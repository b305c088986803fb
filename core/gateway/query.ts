/**
 * Query parameters of the native API are checked like body fields: a route states the ones it
 * takes (`RouteDef.query`) and any other is a 400 naming it, so a typo (`?limt=5`) is told,
 * not silently ignored. The compatible APIs are not mounted through here: real SDKs send extras.
 */
import type { MiddlewareHandler } from "hono";
import { ApiError, echoed } from "../errors.ts";
import type { AppEnv } from "./context.ts";

export function knownQuery(allowed: Readonly<Record<string, string>>): MiddlewareHandler<AppEnv> {
  const names = Object.keys(allowed);
  return async (c, next) => {
    const given = [...new Set(new URL(c.req.url).searchParams.keys())];
    const unknown = given.filter((name) => !Object.hasOwn(allowed, name));
    if (unknown.length) {
      const takes = names.length ? `it takes ${names.join(", ")}` : "it takes none";
      throw new ApiError("invalid_request", `Unknown query parameter "${echoed(unknown[0]!)}" on ${c.req.method} ${c.req.routePath}; ${takes}.`, {
        details: unknown.slice(0, 10).map((name) => ({ field: echoed(name), message: "unknown query parameter" })),
      });
    }
    await next();
  };
}
