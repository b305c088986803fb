/**
 * POST /v1/video/search request and response schemas, exactly the spec's tables
 * (search-service-api.md, "POST /v1/video/search", "Video search meta", "Video result")
 * with api.md's decisions: tiers basic|summary|detailed|full, query 1–500 characters after
 * trimming, unknown fields refused, `meta.approximate_dates` and `meta.backends` added.
 */
import * as v from "valibot";

export const VIDEO_TIERS = ["basic", "summary", "detailed", "full"] as const;
export const FRESHNESS_VALUES = ["day", "week", "month", "year"] as const;

/** language[-script][-region][-variant…], e.g. `en`, `pt-BR`, `zh-Hant-TW`, `de-CH-1996`. */
const BCP47 = /^[A-Za-z]{2,3}(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|\d{3}))?(?:-(?:[A-Za-z0-9]{5,8}|\d[A-Za-z0-9]{3}))*$/;

/** Characters as people count them: code points, so an emoji is one, not two. */
const codePoints = (s: string) => [...s].length;

const Seconds = (field: string) =>
  v.pipe(
    v.number(`${field} must be an integer number of seconds`),
    v.integer(`${field} must be an integer number of seconds`),
    v.minValue(0, `${field} must not be negative`),
  );

export const VideoSearchBody = v.pipe(
  v.strictObject({
    query: v.pipe(
      v.string("query must be a string"),
      v.trim(),
      v.minLength(1, "query must not be empty"),
      v.check((s) => codePoints(s) <= 500, "query must be at most 500 characters"),
    ),
    max_results: v.optional(
      v.pipe(
        v.number("max_results must be an integer"),
        v.integer("max_results must be an integer"),
        v.minValue(1, "max_results must be between 1 and 20"),
        v.maxValue(20, "max_results must be between 1 and 20"),
      ),
      5,
    ),
    tier: v.optional(v.picklist(VIDEO_TIERS, `tier must be one of ${VIDEO_TIERS.join(", ")}`), "summary"),
    include_transcript: v.optional(v.boolean("include_transcript must be a boolean"), true),
    language: v.optional(
      v.pipe(
        v.string("language must be a BCP-47 language tag"),
        v.maxLength(35, "language must be a BCP-47 language tag such as en or pt-BR"),
        v.regex(BCP47, "language must be a BCP-47 language tag such as en or pt-BR"),
      ),
      "en",
    ),
    min_duration: v.optional(Seconds("min_duration")),
    max_duration: v.optional(Seconds("max_duration")),
    freshness: v.optional(v.picklist(FRESHNESS_VALUES, `freshness must be one of ${FRESHNESS_VALUES.join(", ")}`)),
  }),
  v.forward(
    v.partialCheck(
      [["min_duration"], ["max_duration"]],
      (input) => input.min_duration === undefined || input.max_duration === undefined || input.min_duration <= input.max_duration,
      "max_duration must be greater than or equal to min_duration",
    ),
    ["max_duration"],
  ),
);

export type VideoSearchRequest = v.InferOutput<typeof VideoSearchBody>;

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

export const VideoResult = v.object({
  video_id: v.string(),
  title: v.string(),
  channel: v.string(),
  channel_id: v.string(),
  url: v.pipe(v.string(), v.description("Watch URL")),
  thumbnail: v.pipe(v.string(), v.description("Image URL")),
  duration_seconds: Count,
  view_count: Count,
  published_at: v.pipe(
    v.nullable(v.string()),
    v.description("ISO 8601 UTC; derived from relative text such as '3 weeks ago' when meta.approximate_dates is true; null when unknown"),
  ),
  score: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
  transcript_snippet: v.pipe(v.nullable(v.string()), v.description("Token-budgeted transcript excerpt; null when no transcript is available")),
});

export const BackendStatus = v.object({
  status: v.picklist(["ok", "error", "timeout", "skipped", "disabled"]),
  results: Count,
  latency_ms: Count,
  error: v.optional(v.string()),
});

export const VideoSearchResponse = v.object({
  meta: v.object({
    query: v.string(),
    results_count: Count,
    tokens_used: Count,
    duration_ms: Count,
    approximate_dates: v.optional(v.boolean()),
    backends: v.optional(v.record(v.string(), BackendStatus)),
  }),
  results: v.array(VideoResult),
});

export type VideoResultBody = v.InferOutput<typeof VideoResult>;
export type VideoSearchResponseBody = v.InferOutput<typeof VideoSearchResponse>;
