/** POST /v1/scrape request and response (api.md §6). */
import * as v from "valibot";
import { Count, wholeNumber } from "../fields.ts";

export const SCRAPE_FORMATS = ["markdown", "text", "html", "links"] as const;
export const ScrapeBody = v.strictObject({
  url: v.pipe(
    v.string("url must be a string"),
    v.trim(),
    v.maxLength(2048, "url must be at most 2048 characters"),
    v.url("url must be an absolute URL"),
  ),
  formats: v.optional(
    v.pipe(
      v.array(v.picklist(SCRAPE_FORMATS, `each format must be one of ${SCRAPE_FORMATS.join(", ")}`), "formats must be an array"),
      v.minLength(1, "formats must not be empty"),
    ),
    ["markdown"],
  ),
  only_main_content: v.optional(v.boolean("only_main_content must be a boolean"), true),
  timeout_ms: v.optional(wholeNumber("timeout_ms", 1000, 60_000), 15_000),
  max_tokens: v.optional(wholeNumber("max_tokens", 1, 1_000_000)),
});
export type ScrapeRequest = v.InferOutput<typeof ScrapeBody>;

const Nullable = v.nullable(v.string());
export const ScrapeResponse = v.object({
  meta: v.object({
    url: v.string(), final_url: v.string(), status_code: Count, content_type: Nullable,
    duration_ms: Count, tokens_used: Count, cached: v.boolean(),
  }),
  data: v.object({
    title: Nullable, description: Nullable, author: Nullable, published_at: Nullable, language: Nullable, site_name: Nullable,
    markdown: v.optional(v.string()), text: v.optional(v.string()), html: v.optional(v.string()),
    links: v.optional(v.array(v.object({ text: v.string(), url: v.string() }))),
  }),
});
