/**
 * The compatible APIs and the MCP endpoint (api.md §8). Each translates its request into the
 * native one, sends it through the app (dispatch.ts) and translates the answer back.
 */
import type { Context, Hono } from "hono";
import type { AppDeps, AppEnv } from "../gateway/context.ts";
import type { RouteDef } from "../gateway/route.ts";
import type { Authenticator } from "../keys/authenticate.ts";
import type { AccountPlans } from "../limits/plans.ts";
import { dispatcher } from "./dispatch.ts";
import type { CompatRoute } from "./http.ts";
import { firecrawlRoutes } from "./firecrawl/mod.ts";
import { mcpRoutes } from "./mcp/mod.ts";
import { tavilyRoutes } from "./tavily/mod.ts";

export function compatRoutes(app: () => Hono<AppEnv>, deps: AppDeps, auth: Authenticator, routes: RouteDef[], planOf: AccountPlans): CompatRoute[] {
  const dispatch = dispatcher(app);
  const ids = new Set(routes.map((r) => r.operationId));
  const has = (operationId: string) => ids.has(operationId);
  // Absolute URLs this API hands out (Firecrawl's job URLs and `next`): QUARRY_PUBLIC_URL, else the request's origin.
  const publicBase = (c: Context<AppEnv>) => (deps.config.jobs.publicUrl ?? new URL(c.req.url).origin).replace(/\/+$/, "");
  return [
    ...tavilyRoutes(dispatch, deps.ports, has),
    ...firecrawlRoutes(dispatch, deps.ports, has, publicBase),
    ...mcpRoutes(dispatch, auth, planOf, routes, deps.config.version),
  ];
}
