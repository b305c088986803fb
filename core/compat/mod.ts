/**
 * The compatible APIs and the MCP endpoint (api.md §8). Each translates its request into the
 * native one, sends it through the app (dispatch.ts) and translates the answer back.
 */
import type { Hono } from "hono";
import type { AppDeps, AppEnv } from "../gateway/context.ts";
import { dispatcher } from "./dispatch.ts";
import type { CompatRoute } from "./http.ts";
import { firecrawlRoutes } from "./firecrawl/mod.ts";
import { tavilyRoutes } from "./tavily/mod.ts";

export function compatRoutes(app: () => Hono<AppEnv>, deps: AppDeps): CompatRoute[] {
  const dispatch = dispatcher(app);
  return [...tavilyRoutes(dispatch, deps.ports), ...firecrawlRoutes(dispatch, deps.ports)];
}
