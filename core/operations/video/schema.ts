/**
 * POST /v1/video/search request and response schemas, exactly the spec's tables
 * (search-service-api.md, "POST /v1/video/search", "Video search meta", "Video result")
 * with api.md's decisions: tiers basic|summary|detailed|full, query 1–500 characters after
 * trimming, unknown fields refused, `meta.approximate_dates` and `meta.backends` added.
 */
import * as v from "valibot";
import { BackendStatus, Count, freshnessField, Language, Query, tierField } from "../../schema/fields.ts";

/** A duration in whole seconds (a safe integer: 1e23 is no duration). */
const Seconds = (field: string) =>
  v.pipe(
    v.number(`${field} must be an integer number of seconds`),
    v.safeInteger(`${field} must be an integer number of seconds`),
    v.minValue(0, `${field} must not be negative`),
  );

export const VideoSearchBody = v.pipe(
  v.strictObject({
    query: Query,
    max_results: v.optional(
      v.pipe(
        v.number("max_results must be an integer"),
        v.integer("max_results must be an integer"),
        v.minValue(1, "max_results must be between 1 and 20"),
        v.maxValue(20, "max_results must be between 1 and 20"),
      ),
      5,
    ),
    tier: tierField("summary"),
    include_transcript: v.optional(v.boolean("include_transcript must be a boolean"), true),
    language: v.optional(Language, "en"),
    min_duration: v.optional(Seconds("min_duration")),
    max_duration: v.optional(Seconds("max_duration")),
    freshness: freshnessField(),
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

export const VideoSearchResponse = v.object({
  meta: v.object({
    query: v.string(),
    results_count: Count,
    tokens_used: Count,
    duration_ms: Count,
    approximate_dates: v.optional(v.boolean()),
    backends: v.optional(v.record(v.string(), BackendStatus)),
    transcripts: v.optional(
      v.pipe(
        v.object({
          found: Count,
          missing: v.array(v.object({ video_id: v.string(), reason: v.string() })),
        }),
        v.description(
          "When transcripts were asked for (include_transcript, tier above basic): how many results have one, and for each that has none, why (the video has no captions or none in the language, it is not playable, or the player or caption request failed or ran out of time, which may pass)",
        ),
      ),
    ),
  }),
  results: v.array(VideoResult),
});

export type VideoResultBody = v.InferOutput<typeof VideoResult>;
export type VideoSearchResponseBody = v.InferOutput<typeof VideoSearchResponse>;
