/**
 * POST /v1/social/research: the request schema (api.md §6) and the response shape, both as
 * valibot schemas so the route validates and the OpenAPI document describes from one source.
 * Every issue names its field; unknown fields are refused.
 */
import * as v from "valibot";
import { SOCIAL_PLATFORMS } from "../../backends/social/types.ts";

export const TIERS = ["basic", "summary", "detailed", "full"] as const;
export type Tier = (typeof TIERS)[number];
export const FRESHNESS = ["day", "week", "month", "year"] as const;

export const SocialResearchBody = v.strictObject({
  query: v.pipe(
    v.string("query must be a string"),
    v.trim(),
    v.minLength(1, "query must not be empty"),
    v.maxLength(500, "query must be at most 500 characters"),
  ),
  platforms: v.optional(
    v.pipe(
      v.array(v.picklist(SOCIAL_PLATFORMS, `each platform must be one of ${SOCIAL_PLATFORMS.join(", ")}`), "platforms must be an array"),
      v.minLength(1, "platforms must not be empty"),
    ),
  ),
  max_sources: v.optional(
    v.pipe(
      v.number("max_sources must be a number"),
      v.integer("max_sources must be an integer"),
      v.minValue(1, "max_sources must be at least 1"),
      v.maxValue(50, "max_sources must be at most 50"),
    ),
    20,
  ),
  tier: v.optional(v.picklist(TIERS, `tier must be one of ${TIERS.join(", ")}`), "summary"),
  freshness: v.optional(v.picklist(FRESHNESS, `freshness must be one of ${FRESHNESS.join(", ")}`)),
});

export type SocialResearchInput = v.InferOutput<typeof SocialResearchBody>;

export interface FieldIssue {
  field: string;
  message: string;
}

/** Validates a body; each issue names its field (an unknown field as "unknown field"). */
export function parseSocialResearchBody(input: unknown): { ok: true; value: SocialResearchInput } | { ok: false; issues: FieldIssue[] } {
  const result = v.safeParse(SocialResearchBody, input);
  if (result.success) return { ok: true, value: result.output };
  return {
    ok: false,
    issues: result.issues.map((issue) => {
      const field = issue.path?.map((p) => String(p.key)).join(".") ?? "";
      const unknown = issue.kind === "schema" && issue.expected === "never" && issue.path?.length;
      if (unknown) return { field, message: "unknown field" };
      // A missing required key is reported by the object schema in valibot's own words.
      if (issue.input === undefined && issue.path?.length) return { field, message: `${field} is required` };
      return { field, message: issue.message };
    }),
  };
}

const Platform = v.picklist(SOCIAL_PLATFORMS);
const Score = v.pipe(v.number(), v.minValue(0), v.maxValue(1));

const Reply = v.object({
  id: v.string(),
  author: v.nullable(v.string()),
  text: v.string(),
  score: v.nullable(v.number()),
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
    score: v.optional(v.number()),
    comments: v.optional(v.number()),
    answers: v.optional(v.number()),
    reactions: v.optional(v.number()),
    reposts: v.optional(v.number()),
    likes: v.optional(v.number()),
    views: v.optional(v.number()),
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
    results_count: v.number(),
    tokens_used: v.number(),
    duration_ms: v.number(),
    platforms: v.record(
      v.string(),
      v.object({
        status: v.picklist(["ok", "error", "timeout", "disabled"]),
        returned: v.number(),
        kept: v.number(),
        latency_ms: v.number(),
        reason: v.optional(v.string()),
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
