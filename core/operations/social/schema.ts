/**
 * POST /v1/social/research: the request schema (api.md §6) and the response shape, both as
 * valibot schemas so the route validates and the OpenAPI document describes from one source.
 * Every issue names its field; unknown fields are refused.
 */
import * as v from "valibot";
import { SOCIAL_PLATFORM_IDS } from "../../backends/catalogue.ts";
import { SOCIAL_PLATFORMS } from "../../backends/social/types.ts";
import { Count, freshnessField, idList, Int, Query, TIERS, tierField, wholeNumber } from "../../schema/fields.ts";

export const SocialResearchBody = v.strictObject({
  query: Query,
  platforms: idList("platforms", SOCIAL_PLATFORM_IDS, "platform"),
  max_sources: v.optional(wholeNumber("max_sources", 1, 50), 20),
  tier: tierField("summary"),
  freshness: freshnessField(),
});

export type SocialResearchInput = v.InferOutput<typeof SocialResearchBody>;

const Platform = v.picklist(SOCIAL_PLATFORMS);
const Score = v.pipe(v.number(), v.minValue(0), v.maxValue(1));

const Reply = v.object({
  id: v.string(),
  author: v.nullable(v.string()),
  text: v.string(),
  score: v.nullable(Int),
  url: v.string(),
});

export const SocialSourceSchema = v.object({
  id: v.pipe(v.string(), v.description('Platform-prefixed id, e.g. "hn:123", "se:456", "gh:owner/repo#12"')),
  platform: Platform,
  kind: v.picklist(["story", "comment", "question", "answer", "issue", "discussion", "post"]),
  title: v.string(),
  snippet: v.string(),
  text: v.pipe(v.nullable(v.string()), v.description("Excerpt within the tier's token budget; null at tier basic")),
  url: v.string(),
  linked_url: v.nullable(v.string()),
  author: v.nullable(v.string()),
  community: v.nullable(v.string()),
  published_at: v.nullable(v.string()),
  engagement: v.object({
    score: v.optional(Int),
    comments: v.optional(Count),
    answers: v.optional(Count),
    reactions: v.optional(Count),
    reposts: v.optional(Count),
    likes: v.optional(Count),
    views: v.optional(Count),
  }),
  scores: v.object({ relevance: Score, engagement: Score, recency: Score, final: Score }),
  also_discussed_on: v.array(v.object({ platform: Platform, id: v.string(), url: v.string() })),
  top_replies: v.pipe(v.array(Reply), v.description("Best comments or answers, for the top sources at tier summary and up")),
});

const Citation = v.object({ text: v.string(), source_ids: v.array(v.string()) });

export const SocialResearchResponse = v.object({
  meta: v.object({
    query: v.string(),
    tier: v.picklist(TIERS),
    results_count: Count,
    tokens_used: Count,
    duration_ms: Count,
    platforms: v.record(
      v.string(),
      v.object({
        status: v.picklist(["ok", "error", "timeout", "disabled"]),
        returned: Count,
        kept: Count,
        latency_ms: Count,
        reason: v.optional(v.string()),
        retry_at: v.optional(v.pipe(v.string(), v.description("When this failed platform will be asked again (ISO 8601 UTC): it is suspended until then (its rate limit's reset, or a back-off after errors)"))),
      }),
    ),
  }),
  sources: v.array(SocialSourceSchema),
  report: v.object({
    summary: v.string(),
    citations: v.array(Citation),
    themes: v.array(v.object({ label: v.string(), summary: v.string(), source_ids: v.array(v.string()), citations: v.array(Citation) })),
  }),
});

export type SocialSource = v.InferOutput<typeof SocialSourceSchema>;
export type SocialResearchAnswer = v.InferOutput<typeof SocialResearchResponse>;
