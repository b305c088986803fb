/** POST /v1/research request and response (api.md §6). */
import * as v from "valibot";
import { Domains, FRESHNESS, Query, TIERS } from "../search/schema.ts";

export const ResearchBody = v.strictObject({
  query: Query,
  tier: v.optional(v.picklist(TIERS, `tier must be one of ${TIERS.join(", ")}`), "summary"),
  max_sources: v.optional(
    v.pipe(v.number("max_sources must be a number"), v.integer("max_sources must be a whole number"), v.minValue(1, "max_sources must be at least 1"), v.maxValue(20, "max_sources must be at most 20")),
    8,
  ),
  include_domains: Domains("include_domains"),
  exclude_domains: Domains("exclude_domains"),
  freshness: v.optional(v.picklist(FRESHNESS, `freshness must be one of ${FRESHNESS.join(", ")}`)),
  stream: v.optional(v.boolean("stream must be true or false"), false),
});
export type ResearchRequest = v.InferOutput<typeof ResearchBody>;

const BackendStatus = v.object({ status: v.picklist(["ok", "error", "timeout", "skipped", "disabled"]), results: v.number(), latency_ms: v.number(), error: v.optional(v.string()) });
const SourceId = v.pipe(v.string(), v.regex(/^S\d+$/));

export const ResearchResponseSchema = v.object({
  meta: v.object({
    query: v.string(),
    results_count: v.number(),
    tokens_used: v.number(),
    duration_ms: v.number(),
    sub_queries: v.array(v.string()),
    sources_count: v.number(),
    synthesis: v.picklist(["extractive", "llm"]),
    llm_error: v.optional(v.string()),
    notice: v.optional(v.string()),
    backends: v.record(v.string(), BackendStatus),
    pages: v.object({ read: v.number(), failed: v.number(), skipped: v.number() }),
  }),
  report: v.object({
    summary: v.string(),
    findings: v.array(v.object({ text: v.string(), citations: v.array(SourceId) })),
  }),
  sources: v.array(v.object({
    id: SourceId, title: v.string(), url: v.string(), score: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
    excerpt: v.nullable(v.string()), published_at: v.nullable(v.string()),
  })),
});
export type ResearchResponse = v.InferOutput<typeof ResearchResponseSchema>;

export type Stage = "planning" | "searching" | "reading" | "ranking" | "writing";
export interface Progress {
  stage: Stage;
  message: string;
  i?: number;
  n?: number;
}
