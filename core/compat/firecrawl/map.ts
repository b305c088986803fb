/**
 * Firecrawl map (v2 and v1) → native `POST /v1/map` (one unit of the `crawl` group). v2 lists
 * `{url, title}` links, v1 plain URLs. Firecrawl's `sitemap` modes are native's names; v1's
 * `ignoreSitemap` / `sitemapOnly` are the same modes.
 */
import type { Context } from "hono";
import * as v from "valibot";
import type { AppEnv } from "../../gateway/context.ts";
import { authorizationOf, type Dispatch } from "../dispatch.ts";
import { asIgnored, bodyOf, readBody, refuseSchemesAsInvalid } from "../http.ts";
import { CLIENT_FIELDS, ignoredWarning } from "./scrape.ts";

const MapBody = v.looseObject({
  url: v.string("url must be a string"),
  search: v.optional(v.nullable(v.string("search must be a string"))),
  sitemap: v.optional(v.nullable(v.picklist(["include", "skip", "only"], "sitemap must be include, skip or only"))),
  ignoreSitemap: v.optional(v.nullable(v.boolean())),
  sitemapOnly: v.optional(v.nullable(v.boolean())),
  includeSubdomains: v.optional(v.nullable(v.boolean())),
  limit: v.optional(v.nullable(v.number("limit must be a number"))),
  timeout: v.optional(v.nullable(v.number("timeout must be milliseconds"))),
});

export function firecrawlMap(dispatch: Dispatch, version: "v1" | "v2") {
  return async (c: Context<AppEnv>) => {
    const body = await readBody(c, MapBody);
    refuseSchemesAsInvalid([{ field: "url", url: body.url }]);
    const native: Record<string, unknown> = { url: body.url };
    if (body.search) native.search = body.search.slice(0, 200);
    const sitemap = body.sitemap ?? (body.sitemapOnly ? "only" : body.ignoreSitemap ? "skip" : undefined);
    if (sitemap) native.sitemap = sitemap;
    if (typeof body.includeSubdomains === "boolean") native.include_subdomains = body.includeSubdomains;
    if (typeof body.limit === "number") native.limit = Math.min(5000, Math.max(1, Math.round(body.limit)));
    if (typeof body.timeout === "number") native.timeout_ms = Math.min(60_000, Math.max(1000, Math.round(body.timeout)));
    const known = new Set([...CLIENT_FIELDS, "url", "search", "sitemap", "ignoreSitemap", "sitemapOnly", "includeSubdomains", "limit", "timeout"]);
    const ignored = Object.entries(body).filter(([k, val]) => !known.has(k) && val !== undefined && val !== null && val !== false).map(([k]) => k).sort();
    const res = bodyOf<{ meta: Record<string, unknown>; links: Array<{ url: string; title: string | null }> }>(await dispatch(c, { method: "POST", path: "/v1/map", body: native, authorization: authorizationOf(c) }));
    return c.json({
      success: true,
      links: version === "v1" ? res.links.map((l) => l.url) : res.links.map((l) => ({ url: l.url, ...(l.title !== null ? { title: l.title } : {}) })),
      ...(ignored.length ? { warning: ignoredWarning(ignored) } : {}),
      quarry: { ignored: asIgnored(ignored), meta: res.meta },
    });
  };
}
