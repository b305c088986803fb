/** POST /v1/scrape request and response (api.md §6). */
import * as v from "valibot";
import { Count, wholeNumber } from "../../schema/fields.ts";
import { RenderFields } from "../../schema/render-fields.ts";
import { TargetUrl } from "../../schema/targets.ts";

export const SCRAPE_FORMATS = ["markdown", "text", "html", "links", "screenshot"] as const;

export const ScrapeBody = v.strictObject({
  url: TargetUrl("url"),
  formats: v.optional(
    v.pipe(
      v.array(v.picklist(SCRAPE_FORMATS, `each format must be one of ${SCRAPE_FORMATS.join(", ")}`), "formats must be an array"),
      v.minLength(1, "formats must not be empty"),
      // A format named twice is answered (and its tokens counted) once.
      v.transform((formats) => [...new Set(formats)]),
    ),
    ["markdown"],
  ),
  only_main_content: v.optional(v.boolean("only_main_content must be a boolean"), true),
  timeout_ms: v.optional(wholeNumber("timeout_ms", 1000, 60_000), 15_000),
  max_tokens: v.optional(wholeNumber("max_tokens", 1, 1_000_000)),
  ...RenderFields,
});
export type ScrapeRequest = v.InferOutput<typeof ScrapeBody>;

const Nullable = v.nullable(v.string());
export const ScrapeResponse = v.object({
  meta: v.object({
    url: v.string(), final_url: v.string(), status_code: Count, content_type: Nullable,
    duration_ms: Count, tokens_used: Count, cached: v.boolean(),
    rendered: v.pipe(v.boolean(), v.description("Whether the page was rendered in a browser")),
    render_note: v.optional(v.pipe(v.string(), v.description("Why a page that looked like it needed rendering was not rendered"))),
  }),
  data: v.object({
    title: Nullable, description: Nullable, author: Nullable, published_at: Nullable, language: Nullable, site_name: Nullable,
    markdown: v.optional(v.string()), text: v.optional(v.string()), html: v.optional(v.string()),
    links: v.optional(v.array(v.object({ text: v.string(), url: v.string() }))),
    screenshot: v.optional(v.pipe(v.string(), v.description("PNG of the rendered viewport, base64"))),
  }),
});
