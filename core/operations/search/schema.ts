/** POST /v1/search request (api.md §6). */
import * as v from "valibot";
import { WEB_BACKENDS } from "../../backends/registry.ts";

export const TIERS = ["basic", "summary", "detailed", "full"] as const;
export const FRESHNESS = ["day", "week", "month", "year"] as const;
const WEB_IDS = WEB_BACKENDS.map((b) => b.about.id);

export const Query = v.pipe(
  v.string("query must be a string"),
  v.trim(),
  v.minLength(1, "query must not be empty"),
  v.maxLength(500, "query must be at most 500 characters"),
);
export const Language = v.pipe(v.string("language must be a string"), v.regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, "language must be a BCP-47 tag such as en or pt-BR"));
const Hostname = v.pipe(
  v.string("each domain must be a string"),
  v.trim(),
  v.toLowerCase(),
  v.regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, "each domain must be a hostname such as example.org"),
);
/** An optional list of hostnames (include_domains / exclude_domains of search and research). */
export const Domains = (name: string) => v.optional(v.pipe(v.array(Hostname, `${name} must be an array of hostnames`), v.maxLength(50, `${name} takes at most 50 hostnames`)));

export const SearchBody = v.strictObject({
  query: Query,
  tier: v.optional(v.picklist(TIERS, `tier must be one of ${TIERS.join(", ")}`), "basic"),
  max_results: v.optional(v.pipe(v.number("max_results must be a number"), v.integer("max_results must be a whole number"), v.minValue(1, "max_results must be at least 1"), v.maxValue(20, "max_results must be at most 20")), 5),
  include_domains: Domains("include_domains"),
  exclude_domains: Domains("exclude_domains"),
  freshness: v.optional(v.picklist(FRESHNESS, `freshness must be one of ${FRESHNESS.join(", ")}`)),
  language: v.optional(Language, "en"),
  backends: v.optional(v.pipe(v.array(v.picklist(WEB_IDS, `each backend must be one of ${WEB_IDS.join(", ")}`), "backends must be an array"), v.minLength(1, "backends must not be empty"))),
});
export type SearchRequest = v.InferOutput<typeof SearchBody>;
