/** POST /v1/map: a site's URLs from its sitemaps and the page's links (api.md §9). */
import type { AppDeps } from "../../gateway/context.ts";
import type { RouteDef } from "../../gateway/route.ts";
import { mapSite } from "./map.ts";
import { MapBody, MapResponse, type MapRequest } from "./schema.ts";

export function mapRoutes({ ports }: AppDeps): RouteDef[] {
  return [
    {
      method: "POST",
      path: "/v1/map",
      operationId: "map",
      summary: "List a site's URLs from its sitemaps and the page's links",
      description:
        "Reads robots.txt's `Sitemap:` lines, /sitemap.xml, sitemap indexes and gzipped sitemaps, and the links of the page itself, and returns the site's URLs (same host; subdomains with `include_subdomains`), deduplicated, optionally filtered by `search`. `sitemap: only` skips the page, `skip` skips the sitemaps. Every fetch passes the egress guard; a `url` with another scheme than http(s), or a private one, is a 422 `url_not_allowed` and costs nothing. One unit of the `crawl` group.",
      example: { url: "https://example.org/docs/", limit: 100, sitemap: "include" },
      auth: true,
      scope: "scrape",
      group: "crawl",
      body: MapBody,
      status: 200,
      response: MapResponse,
      errors: ["url_not_allowed", "upstream_error", "timeout"],
      handler: async (c) => c.json(await mapSite(ports, c.get("body") as MapRequest)),
    },
  ];
}
