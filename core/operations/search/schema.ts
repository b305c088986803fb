/** POST /v1/search request and response (api.md §6). */
import * as v from "valibot";
import { WEB_BACKEND_IDS } from "../../backends/catalogue.ts";
import { BackendStatus, Count, Domains, freshnessField, idList, Language, Query, tierField, wholeNumber } from "../fields.ts";

export const SearchBody = v.strictObject({
  query: Query,
  tier: tierField("basic"),
  max_results: v.optional(wholeNumber("max_results", 1, 20), 5),
  include_domains: Domains("include_domains"),
  exclude_domains: Domains("exclude_domains"),
  freshness: freshnessField(),
  language: v.optional(Language, "en"),
  backends: idList("backends", WEB_BACKEND_IDS, "backend"),
});
export type SearchRequest = v.InferOutput<typeof SearchBody>;

export const SearchResponseSchema = v.object({
  meta: v.object({
    query: v.string(), results_count: Count, tokens_used: Count, duration_ms: Count, cached: v.boolean(),
    backends: v.record(v.string(), BackendStatus),
  }),
  results: v.array(v.object({
    title: v.string(), url: v.string(), content: v.string(), score: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
    published_at: v.nullable(v.string()), source: v.string(), engines: v.array(v.string()),
    excerpt: v.nullable(v.string()), raw_content: v.nullable(v.string()),
  })),
});
