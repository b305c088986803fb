/** POST /v1/research request and response (api.md §6). */
import * as v from "valibot";
import { BackendStatus, Count, Domains, freshnessField, Query, tierField, wholeNumber } from "../../schema/fields.ts";
import { COLLECTION_NAME } from "../../collections/service.ts";

export const ResearchBody = v.pipe(v.strictObject({
  query: Query,
  tier: tierField("summary"),
  max_sources: v.optional(wholeNumber("max_sources", 1, 20), 8),
  include_domains: Domains("include_domains"),
  exclude_domains: Domains("exclude_domains"),
  freshness: freshnessField(),
  stream: v.optional(v.boolean("stream must be true or false"), false),
  collections: v.optional(v.pipe(
    v.array(v.pipe(v.string("each of collections must be a string"), v.regex(COLLECTION_NAME, "each of collections must be a collection's name")), "collections must be an array"),
    v.minLength(1, "collections must name at least one collection"), v.maxLength(5, "collections takes at most 5 collections"),
    v.description("This account's collections to research beside the web (each `collection:<name>` in `meta.backends`): their passages that match the question and its sub-queries are sources like read pages, cited by their URL; a name the account does not have is a 404"),
  )),
  web: v.optional(v.pipe(v.boolean("web must be a boolean"), v.description("false: ask no web engine and read no web page; the report rests on `collections` alone")), true),
}),
  v.forward(v.partialCheck([["web"], ["collections"]], (input) => input.web !== false || Boolean(input.collections?.length), "web: false needs collections to research"), ["web"]),
);
export type ResearchRequest = v.InferOutput<typeof ResearchBody>;

const SourceId = v.pipe(v.string(), v.regex(/^S\d+$/));

export const ResearchResponseSchema = v.object({
  meta: v.object({
    query: v.string(),
    results_count: Count,
    tokens_used: Count,
    duration_ms: Count,
    sub_queries: v.array(v.string()),
    sources_count: Count,
    synthesis: v.picklist(["extractive", "llm"]),
    /** How sentences were ranked: by words alone, or with the configured embeddings model too. */
    ranking: v.picklist(["lexical", "embeddings"]),
    embeddings_error: v.optional(v.string()),
    llm_error: v.optional(v.string()),
    notice: v.optional(v.string()),
    backends: v.record(v.string(), BackendStatus),
    pages: v.object({
      read: Count, failed: Count, skipped: Count,
      unread: v.pipe(
        v.array(v.object({ id: SourceId, url: v.string(), reason: v.string() })),
        v.description("Each source whose page was not read (failed, or skipped for lack of time or text), with why; its excerpt is then the engine's snippet. Empty at tier basic, which reads no page"),
      ),
    }),
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
