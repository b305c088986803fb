/**
 * Query parameters of the native API are checked like body fields: a route states the ones it
 * takes (`RouteDef.query`) and any other is a 400 naming it, so a typo (`?limt=5`) is told,
 * not silently ignored, and one given twice is a 400 too. The compatible APIs are not mounted through here: real SDKs send extras.
 */
import type { Context } from "hono";
import { ApiError, echoed } from "../errors.ts";
import type { AppEnv } from "./context.ts";
import { documentedPath } from "./route.ts";

/**
 * Refuses a query parameter the route does not take (`allowed`), or one given twice. `path` is the
 * route's pattern, for the message. Not async: most requests have no query, and no URL is parsed for them.
 */
export function checkQuery(c: Context<AppEnv>, allowed: Readonly<Record<string, string>>, path: string): void {
  if (!c.req.url.includes("?")) return;
  const params = new URL(c.req.url).searchParams;
  const given = [...new Set(params.keys())];
  const unknown = given.filter((name) => !Object.hasOwn(allowed, name));
  if (unknown.length) {
    const names = Object.keys(allowed);
    const takes = names.length ? `it takes ${names.join(", ")}` : "it takes none";
    throw new ApiError("invalid_request", `Unknown query parameter "${echoed(unknown[0]!)}" on ${c.req.method} ${documentedPath(path)}; ${takes}.`, {
      details: unknown.slice(0, 10).map((name) => ({ field: echoed(name), message: "unknown query parameter" })),
    });
  }
  // `?skip=10&skip=20` has no one meaning: said, not read as whichever comes first.
  const repeated = given.filter((name) => params.getAll(name).length > 1);
  if (repeated.length) {
    throw new ApiError("invalid_request", `Query parameter "${echoed(repeated[0]!)}" is given more than once; give it once.`, {
      details: repeated.slice(0, 10).map((name) => ({ field: echoed(name), message: "given more than once" })),
    });
  }
}

/** The `skip` a paged list takes: a whole number of `noun` from 0, else a 400 naming it. */
export function skipParam(c: Context<AppEnv>, noun: string): number {
  const raw = c.req.query("skip") ?? "0";
  if (!/^\d{1,9}$/.test(raw)) throw new ApiError("invalid_request", `skip must be a whole number of ${noun} from 0.`, { details: [{ field: "skip", message: "skip must be a whole number" }] });
  return Number(raw);
}
