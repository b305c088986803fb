/**
 * The Firecrawl-compatible API under `/compat/firecrawl` (api.md §8), v2 and v1: an unchanged
 * `@mendable/firecrawl-js` with `apiUrl` (or `FIRECRAWL_API_URL`) set to that base works.
 */
import type { Ports } from "../../ports.ts";
import type { Dispatch } from "../dispatch.ts";
import { routeMaker, type CompatRoute } from "../http.ts";
import { firecrawlDialect } from "./dialect.ts";
import { firecrawlScrape, firecrawlSearch } from "./routes.ts";

export const FIRECRAWL_BASE = "/compat/firecrawl";

export function firecrawlRoutes(dispatch: Dispatch, ports: Ports): CompatRoute[] {
  const route = routeMaker(FIRECRAWL_BASE, firecrawlDialect, ports.logger);
  return [
    route("POST", "/v2/scrape", firecrawlScrape(dispatch)),
    route("POST", "/v2/search", firecrawlSearch(dispatch, "v2")),
    route("POST", "/v1/scrape", firecrawlScrape(dispatch)),
    route("POST", "/v1/search", firecrawlSearch(dispatch, "v1")),
  ];
}
