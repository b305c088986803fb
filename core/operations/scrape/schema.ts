/** POST /v1/scrape request and response (api.md §6). */
import * as v from "valibot";
import { Count, wholeNumber } from "../../schema/fields.ts";
import { RenderFields } from "../../schema/render-fields.ts";
import { ProxyFields } from "../../schema/proxy-fields.ts";
import { TargetUrl } from "../../schema/targets.ts";
import { ChangesAnswer, ChangesOptions } from "../../schema/changes-fields.ts";
import { COLLECTION_NAME } from "../../collections/service.ts";

export const SCRAPE_FORMATS = ["markdown", "text", "html", "raw_html", "links", "screenshot", "summary", "json", "changes"] as const;

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
  json_options: v.optional(v.pipe(
    v.strictObject({
      schema: v.optional(v.pipe(
        v.record(v.string(), v.unknown(), "json_options.schema must be a JSON Schema object"),
        v.description("A JSON Schema the answer must be valid against (drafts 2020-12, 2019-09, 7 and 4)"),
      )),
      prompt: v.optional(v.pipe(v.string("json_options.prompt must be a string"), v.trim(), v.minLength(1, "json_options.prompt must not be empty"), v.maxLength(2000, "json_options.prompt must be at most 2000 characters"))),
    }, "json_options must be an object: {schema, prompt}"),
    v.description("For the `json` format (needs QUARRY_LLM_URL): the JSON Schema the model fills from the page, and/or what to extract in words"),
  )),
  changes_options: v.optional(ChangesOptions),
  max_age_ms: v.optional(v.pipe(
    wholeNumber("max_age_ms", 0, 30 * 24 * 3600 * 1000),
    v.description("Serve a cached read of this URL (same options) no older than this many ms; 0 reads afresh. Without it, a read up to 15 minutes old is served"),
  )),
  collection: v.optional(v.pipe(
    v.string("collection must be a string"),
    v.regex(COLLECTION_NAME, "collection must be 1–64 characters of a-z, 0-9, - and _"),
    v.description("The account's collection to index the page in, under its URL (POST /v1/collections makes one): an earlier version is replaced, unless its content is the same; the page is read afresh, never from the cache. A name the account has no collection of is a 404; past the plan's index_documents or index_bytes a 403 index_full, nothing added"),
  )),
  ...RenderFields,
  ...ProxyFields,
});
export type ScrapeRequest = v.InferOutput<typeof ScrapeBody>;

const Nullable = v.nullable(v.string());
export const ScrapeResponse = v.object({
  meta: v.object({
    url: v.string(), final_url: v.string(), status_code: Count, content_type: Nullable,
    duration_ms: Count, tokens_used: Count, cached: v.pipe(v.boolean(), v.description("Whether this answer is a cached read (see cache_age_ms)")),
    cache_age_ms: v.pipe(v.nullable(Count), v.description("How old the cached read is, in ms; null when the page was read for this request")),
    summary: v.optional(v.pipe(v.picklist(["llm", "extractive"]), v.description("Who wrote data.summary: the model at QUARRY_LLM_URL, or the extractive summary"))),
    summary_error: v.optional(v.pipe(v.string(), v.description("Why the model's summary was replaced by the extractive one"))),
    rendered: v.pipe(v.boolean(), v.description("Whether the page was rendered in a browser")),
    render_note: v.optional(v.pipe(v.string(), v.description("Why a page that looked like it needed rendering was not rendered"))),
    fetch_path: v.pipe(v.array(v.string()), v.description('Each step taken to read the page and what it gave, e.g. ["static: 403 cloudflare challenge", "render: ok"] (api.md §12)')),
    location_note: v.optional(v.pipe(v.string(), v.description("Why the read did not come from location.country"))),
    collection: v.optional(v.pipe(
      v.object({ name: v.string(), document: v.string(), outcome: v.picklist(["added", "replaced", "unchanged", "skipped"]), reason: v.optional(v.string()) }),
      v.description("With `collection`: the document (the page's URL) and what indexing did: added, replaced (the content changed), unchanged (not indexed again), or skipped with the reason (an error status, no text)"),
    )),
  }),
  data: v.object({
    title: Nullable, description: Nullable, author: Nullable, published_at: Nullable, language: Nullable, site_name: Nullable,
    markdown: v.optional(v.string()), text: v.optional(v.string()), html: v.optional(v.string()),
    raw_html: v.optional(v.pipe(v.string(), v.description("The document as fetched (or as the browser rendered it), decoded; empty for a PDF or office document"))),
    links: v.optional(v.pipe(
      v.array(v.object({ text: v.string(), url: v.string(), main: v.pipe(v.boolean(), v.description("Whether the link stands in the page's main content")) })),
      v.description("Every http(s) link of the page, absolute, once each, in page order"),
    )),
    screenshot: v.optional(v.pipe(v.string(), v.description("PNG of the rendered viewport, base64"))),
    summary: v.optional(v.pipe(v.string(), v.description("A few sentences on what the page says"))),
    json: v.optional(v.pipe(v.unknown(), v.description("The page's data as json_options asked, valid against its schema"))),
    structured_data: v.optional(v.pipe(
      v.object({ json_ld: v.array(v.unknown()), microdata: v.array(v.unknown()), open_graph: v.record(v.string(), v.string()) }),
      v.description("The page's own JSON-LD blocks, microdata items and og:* properties, when it states any"),
    )),
    changes: v.optional(ChangesAnswer),
  }),
});
