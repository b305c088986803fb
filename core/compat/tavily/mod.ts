/**
 * The Tavily-compatible API under `/compat/tavily` (api.md §8): an unchanged `@tavily/core`
 * client with `apiBaseURL`, or `tavily-python` with `api_base_url`, set to that base works.
 */
import type { Ports } from "../../ports.ts";
import type { Dispatch } from "../dispatch.ts";
import { fallbackRoutes, routeMaker, type CompatRoute } from "../http.ts";
import { tavilyDialect } from "./dialect.ts";
import { tavilyCrawl, tavilyMap } from "./crawl.ts";
import { tavilyExtract } from "./extract.ts";
import { tavilyGetResearch, tavilyResearch } from "./research.ts";
import { tavilySearch } from "./search.ts";
import { tavilyUsage } from "./usage.ts";

export const TAVILY_BASE = "/compat/tavily";

export function tavilyRoutes(dispatch: Dispatch, ports: Ports, has: (operationId: string) => boolean): CompatRoute[] {
  const now = () => ports.clock.now();
  const route = routeMaker(TAVILY_BASE, tavilyDialect, ports.logger);
  const routes = [
    route("POST", "/search", tavilySearch(dispatch, now)),
    route("POST", "/extract", tavilyExtract(dispatch, now)),
    route("POST", "/research", tavilyResearch(dispatch, ports.cache, ports.logger, now)),
    route("GET", "/research/:request_id", tavilyGetResearch(dispatch, ports.cache, now)),
    route("GET", "/usage", tavilyUsage(dispatch)),
    // Mounted when the app has the native site operations they call.
    ...(has("map") ? [route("POST", "/map", tavilyMap(dispatch, now))] : []),
    ...(has("crawl") ? [route("POST", "/crawl", tavilyCrawl(dispatch, now))] : []),
  ];
  return [...routes, ...fallbackRoutes(TAVILY_BASE, tavilyDialect, ports.logger, routes)];
}
