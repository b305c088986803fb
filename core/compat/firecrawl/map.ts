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
import { bounded, type Clamped } from "../clamped.ts";
import { MapLimit, MapTimeout, withScheme } from "./checks.ts";
import { CLIENT_FIELDS, firecrawlWarning } from "./scrape.ts";

const MapBody = v.looseObject({
  url: v.string("url must be a string"),
  search: v.optional(v.nullable(v.string("search must be a string"))),
  sitemap: v.optional(v.nullable(v.picklist(["include", "skip", "only"], "sitemap must be include, skip or only"))),
  ignoreSitemap: v.optional(v.nullable(v.boolean())),
  sitemapOnly: v.optional(v.nullable(v.boolean())),
  includeSubdomains: v.optional(v.nullable(v.boolean())),
  limit: MapLimit,
  timeout: MapTimeout,
});

/** Quarry's map: at most 5000 URLs, reading for 1 to 60 s. */
const MAX_LINKS = 5000;
const MAP_MS = { min: 1000, max: 60_000 };
const MAX_SEARCH = 200;

export function firecrawlMap(dispatch: Dispatch, version: "v1" | "v2") {
  return async (c: Context<AppEnv>) => {
    const body = await readBody(c, MapBody);
    const url = withScheme(body.url);
    refuseSchemesAsInvalid([{ field: "url", url }]);
    const clamped: Clamped[] = [];
    // Firecrawl's default limit (5000), not native's, when the body leaves it out; a fraction lists the whole number below it, as Firecrawl's does.
    const limit = Math.min(MAX_LINKS, Math.floor(body.limit ?? MAX_LINKS));
    if (typeof body.limit === "number" && limit !== body.limit) {
      clamped.push({ option: "limit", requested: body.limit, applied: limit, reason: body.limit > MAX_LINKS ? `Quarry's map lists at most ${MAX_LINKS} URLs` : "a map lists a whole number of URLs" });
    }
    const native: Record<string, unknown> = { url, limit };
    // Quarry's map searches with at most 200 characters; Firecrawl takes any search.
    const search = body.search?.trim() ?? "";
    if (search) native.search = search.slice(0, MAX_SEARCH);
    const sitemap = body.sitemap ?? (body.sitemapOnly ? "only" : body.ignoreSitemap ? "skip" : undefined);
    if (sitemap) native.sitemap = sitemap;
    if (typeof body.includeSubdomains === "boolean") native.include_subdomains = body.includeSubdomains;
    if (typeof body.timeout === "number") native.timeout_ms = bounded(clamped, "timeout", Math.ceil(body.timeout), MAP_MS.min, MAP_MS.max, `Quarry's map reads for ${MAP_MS.min} to ${MAP_MS.max} ms, and answers with what it found by then`);
    const known = new Set([...CLIENT_FIELDS, "url", "search", "sitemap", "ignoreSitemap", "sitemapOnly", "includeSubdomains", "limit", "timeout"]);
    const ignored = Object.entries(body).filter(([k, val]) => !known.has(k) && val !== undefined && val !== null && val !== false).map(([k]) => k);
    if (search.length > MAX_SEARCH) ignored.push(`search past its first ${MAX_SEARCH} characters`);
    ignored.sort();
    const res = bodyOf<{ meta: Record<string, unknown>; links: Array<{ url: string; title: string | null }> }>(await dispatch(c, { method: "POST", path: "/v1/map", body: native, authorization: authorizationOf(c) }));
    const warning = firecrawlWarning(ignored, clamped);
    const hints = mapHints(res.meta);
    return c.json({
      success: true,
      links: version === "v1" ? res.links.map((l) => l.url) : res.links.map((l) => ({ url: l.url, ...(l.title !== null ? { title: l.title } : {}) })),
      ...(warning ? { warning } : {}),
      ...(hints.length ? { agent_hints: hints } : {}),
      quarry: { ignored: asIgnored(ignored), clamped, meta: res.meta },
    });
  };
}

/**
 * What the map could not read, as `agent_hints` (the one field of a map answer the v2 client
 * passes on besides the links): the start page failing, or a sitemap, leaves the list partial.
 */
function mapHints(meta: Record<string, unknown>): string[] {
  const hints: string[] = [];
  if (typeof meta.page_error === "string") hints.push(`The start page could not be read (${meta.page_error.replace(/[.!?]+$/, "")}), so the links a working page would have are missing; the URLs come from what it answered and the site's sitemaps.`);
  const failed = Array.isArray(meta.sitemap_errors) ? (meta.sitemap_errors as Array<{ url: string; error: string }>) : [];
  for (const f of failed.slice(0, 5)) hints.push(`The sitemap ${f.url} could not be read (${f.error}), so the URLs it lists may be missing.`);
  if (failed.length > 5) hints.push(`${failed.length - 5} more sitemaps could not be read (quarry.meta.sitemap_errors lists them).`);
  return hints;
}
