/** POST /v1/map request and response (api.md §9). */
import * as v from "valibot";
import { Count, wholeNumber } from "../../schema/fields.ts";
import { TargetUrl } from "../../schema/targets.ts";

export const SITEMAP_MODES = ["include", "only", "skip"] as const;

export const MapBody = v.strictObject({
  url: TargetUrl("url"),
  limit: v.optional(wholeNumber("limit", 1, 5000), 100),
  include_subdomains: v.optional(v.boolean("include_subdomains must be a boolean"), false),
  search: v.optional(v.pipe(v.string("search must be a string"), v.trim(), v.maxLength(200, "search must be at most 200 characters"))),
  sitemap: v.optional(v.picklist(SITEMAP_MODES, `sitemap must be one of ${SITEMAP_MODES.join(", ")}`), "include"),
  timeout_ms: v.optional(wholeNumber("timeout_ms", 1000, 60_000), 15_000),
});
export type MapRequest = v.InferOutput<typeof MapBody>;

export const MapResponse = v.object({
  meta: v.object({
    url: v.string(),
    results_count: Count,
    duration_ms: Count,
    sitemaps: v.pipe(v.array(v.string()), v.description("Sitemaps read (from robots.txt, /sitemap.xml and sitemap indexes)")),
    sitemap_errors: v.array(v.object({ url: v.string(), error: v.string() })),
    from_sitemaps: Count,
    from_page: Count,
    page_error: v.optional(v.pipe(v.string(), v.description("Why the page itself could not be read, when its sitemaps still gave links"))),
  }),
  links: v.array(v.object({ url: v.string(), title: v.nullable(v.string()) })),
});
