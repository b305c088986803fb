/**
 * The Firecrawl-compatible API under `/compat/firecrawl` (api.md §8), v2 and v1: an unchanged
 * `@mendable/firecrawl-js` with `apiUrl` (or `FIRECRAWL_API_URL`) set to that base works. Map,
 * crawl and batch scrape are mounted when the app has the native operations they call.
 */
import type { Ports } from "../../ports.ts";
import type { Dispatch } from "../dispatch.ts";
import { fallbackRoutes, routeMaker, type CompatRoute } from "../http.ts";
import { firecrawlDialect } from "./dialect.ts";
import { firecrawlBatchStart, firecrawlCrawlStart, firecrawlJobCancel, firecrawlJobErrors, firecrawlJobStatus, type PublicBase } from "./jobs.ts";
import { firecrawlMap } from "./map.ts";
import { firecrawlScrape, firecrawlSearch } from "./routes.ts";

export const FIRECRAWL_BASE = "/compat/firecrawl";

export function firecrawlRoutes(dispatch: Dispatch, ports: Ports, has: (operationId: string) => boolean, publicBase: PublicBase): CompatRoute[] {
  const route = routeMaker(FIRECRAWL_BASE, firecrawlDialect, ports.logger);
  const canRender = () => Boolean(ports.render) && ports.render!.health().status !== "disabled";
  const routes = (["v2", "v1"] as const).flatMap((ver) => [
    route("POST", `/${ver}/scrape`, firecrawlScrape(dispatch, canRender, ver)),
    route("POST", `/${ver}/search`, firecrawlSearch(dispatch, ver)),
    ...(has("map") ? [route("POST", `/${ver}/map`, firecrawlMap(dispatch, ver))] : []),
    ...(has("crawl")
      ? [
        route("POST", `/${ver}/crawl`, firecrawlCrawlStart(dispatch, publicBase, ver, canRender)),
        route("GET", `/${ver}/crawl/:id`, firecrawlJobStatus(dispatch, publicBase, "crawl", ver)),
        route("DELETE", `/${ver}/crawl/:id`, firecrawlJobCancel(dispatch, "crawl")),
        route("GET", `/${ver}/crawl/:id/errors`, firecrawlJobErrors(dispatch, "crawl")),
        // The v1 client's checkCrawlErrors and checkBatchScrapeErrors send DELETE: a read all the same.
        ...(ver === "v1" ? [route("DELETE", `/${ver}/crawl/:id/errors`, firecrawlJobErrors(dispatch, "crawl"))] : []),
      ]
      : []),
    ...(has("batchScrape")
      ? [
        route("POST", `/${ver}/batch/scrape`, firecrawlBatchStart(dispatch, publicBase, ver, canRender)),
        route("GET", `/${ver}/batch/scrape/:id`, firecrawlJobStatus(dispatch, publicBase, "batch", ver)),
        route("DELETE", `/${ver}/batch/scrape/:id`, firecrawlJobCancel(dispatch, "batch")),
        route("GET", `/${ver}/batch/scrape/:id/errors`, firecrawlJobErrors(dispatch, "batch")),
        ...(ver === "v1" ? [route("DELETE", `/${ver}/batch/scrape/:id/errors`, firecrawlJobErrors(dispatch, "batch"))] : []),
      ]
      : []),
  ]);
  return [...routes, ...fallbackRoutes(FIRECRAWL_BASE, firecrawlDialect, ports.logger, routes)];
}
