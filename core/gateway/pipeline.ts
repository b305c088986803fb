/**
 * A native route's gateway steps and its handler as one Hono handler (issue #33): the route's
 * name for metrics → authenticate + scope → known query parameters → JSON body → admission →
 * the operation's libraries → the handler. They were one Hono middleware each, five to seven
 * async steps per request through Hono's compose (a promise, a closure and a dispatch apiece);
 * here they are plain calls in the same order, with the same errors.
 *
 * A step's refusal is thrown, before admission, to Hono's error handler as before. An error of the
 * handler (or of loading the libraries) becomes its error response here, inside admission, as
 * Hono's compose made it there: admission sees the answer's status, releasing the unit of a 5xx
 * or a refusal and committing any other, before the response leaves. A handler's `reply` is
 * handed out as it is: the outer step (headers.ts) makes its one Response.
 */
import type { Context, ErrorHandler } from "hono";
import { librariesLoaded, loadLibraries } from "../lazy.ts";
import type { AppEnv } from "./context.ts";
import { admit, authorize, jsonBody } from "./guard.ts";
import { checkQuery } from "./query.ts";
import { type Answer, Reply } from "./reply.ts";
import { admitBeside, type BesideDeps } from "./speculate.ts";
import type { RouteDef } from "./route.ts";

export interface PipelineDeps extends BesideDeps {
  /** The app's error handler: an error of the handler is answered with it, as Hono's own would. */
  onError: ErrorHandler<AppEnv>;
  /** Name the route on the context (`route`): only metrics read it. */
  nameRoutes?: boolean;
}

export function routePipeline(r: RouteDef, deps: PipelineDeps): (c: Context<AppEnv>) => Promise<Answer> {
  const { auth, planOf, counters, clock, lastUsed, logger, onError, nameRoutes } = deps;
  // The native API's query parameters are checked as its body fields are (/health and /metrics take what probes add).
  const query = r.path.startsWith("/v1/") ? (r.query ?? {}) : null;
  // Operations parse HTML and count tokens: those libraries load on the first one, not at start-up.
  const needsLibraries = r.group !== null;

  /**
   * Runs the handler: its answer (a `reply` stays one, made a Response by the outer step), or the
   * error response for what it threw, which is `c.res` as a Response the handler set is.
   */
  const answer = async (c: Context<AppEnv>): Promise<Answer> => {
    try {
      if (needsLibraries && !librariesLoaded()) await loadLibraries();
      const res = await r.handler(c);
      if (res && !c.finalized) {
        if (res instanceof Reply) return res;
        c.res = res;
      }
    } catch (err) {
      if (!(err instanceof Error)) throw err;
      c.error = err;
      c.res = await onError(err, c);
    }
    return c.res;
  };

  // The admission asked beside the key's confirmation where the counters can take it back (gateway/speculate.ts).
  const beside = r.auth && !r.body && counters.withdraw !== undefined;

  return async (c) => {
    if (nameRoutes) c.set("route", r.path);
    if (beside) {
      const early = await admitBeside(c, r, deps, query, () => answer(c));
      if (early !== null) return early;
    }
    if (r.auth) await authorize(c, auth, planOf, r.scope, r.path);
    if (query) checkQuery(c, query, r.path);
    if (r.body) await jsonBody(c, r.body, r.maxBodyBytes);
    if (r.auth) return admit(c, counters, clock, r.group, lastUsed, logger, () => answer(c), r.readsUsage === true);
    return answer(c);
  };
}
