/**
 * POST /v1/search request and response (api.md §6, and §8: the options agent clients ask for,
 * under Tavily's names and meanings so the compatibility layer can pass them straight through).
 */
import * as v from "valibot";
import { COLLECTION_NAME } from "../../collections/service.ts";
import { WEB_BACKEND_IDS } from "../../backends/catalogue.ts";
import { BackendStatus, Count, Domains, FRESHNESS, freshnessField, idList, Language, Query, tierField, wholeNumber } from "../../schema/fields.ts";

/** YYYY-MM-DD naming a real calendar day (2025-02-30 is refused). */
const Day = (field: string) =>
  v.pipe(
    v.string(`${field} must be a date like 2025-01-31`),
    v.regex(/^\d{4}-\d{2}-\d{2}$/, `${field} must be a date like 2025-01-31 (YYYY-MM-DD)`),
    v.check((s) => {
      const d = new Date(`${s}T00:00:00Z`);
      return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
    }, `${field} must be a real calendar date`),
  );

/** Tavily's `time_range` spellings: the same windows as `freshness`. */
export const TIME_RANGES = [...FRESHNESS, "d", "w", "m", "y"] as const;

/** `finance` is accepted (Tavily has it) and searched as `general`, which `meta.ignored` says. */
export const TOPICS = ["general", "news", "finance"] as const;

export const SearchBody = v.pipe(
  v.strictObject({
    query: Query,
    tier: tierField("basic"),
    max_results: v.optional(wholeNumber("max_results", 1, 20), 5),
    include_domains: Domains("include_domains"),
    exclude_domains: Domains("exclude_domains"),
    freshness: freshnessField(),
    language: v.optional(Language, "en"),
    backends: idList("backends", WEB_BACKEND_IDS, "backend"),
    include_answer: v.optional(
      v.pipe(
        v.union([v.boolean(), v.picklist(["basic", "advanced"])], 'include_answer must be true, false, "basic" or "advanced"'),
        v.description("`answer`: a few sentences citing result numbers ([1][3]); `advanced` writes more. By the configured model, else extractive (`meta.answer`)"),
      ),
      false,
    ),
    include_raw_content: v.optional(
      v.pipe(
        v.union([v.boolean(), v.picklist(["markdown", "text"])], 'include_raw_content must be true, false, "markdown" or "text"'),
        v.description("Each result's whole page in `raw_content` (≤ 4,000 tokens); true means markdown"),
      ),
      false,
    ),
    chunks_per_source: v.optional(v.pipe(wholeNumber("chunks_per_source", 1, 5), v.description("Up to this many query-relevant passages of each result's page, in `chunks`"))),
    start_date: v.optional(v.pipe(Day("start_date"), v.description("Keep results published on or after this day (UTC), YYYY-MM-DD"))),
    end_date: v.optional(v.pipe(Day("end_date"), v.description("Keep results published on or before this day (UTC), YYYY-MM-DD"))),
    undated: v.optional(
      v.pipe(v.picklist(["keep", "drop"], 'undated must be "keep" or "drop"'), v.description("With start_date/end_date: keep or drop results whose date is unknown (`meta.undated`)")),
      "drop",
    ),
    time_range: v.optional(v.pipe(v.picklist(TIME_RANGES, `time_range must be one of ${TIME_RANGES.join(", ")}`), v.description("Tavily's name for freshness"))),
    topic: v.optional(
      v.pipe(v.picklist(TOPICS, `topic must be one of ${TOPICS.join(", ")}`), v.description("`news` asks the engines' news search; `finance` is searched as general (`meta.ignored`)")),
      "general",
    ),
    country: v.optional(
      v.pipe(
        v.string("country must be a country name or an ISO 3166-1 code"),
        v.trim(),
        v.regex(/^[\p{L}][\p{L} .,'’()&-]{1,59}$/u, "country must be a country name such as germany or a code such as DE"),
        v.description("Search as from this country: an English name or an ISO 3166-1 code (`meta.country`)"),
      ),
    ),
    include_images: v.optional(v.pipe(v.boolean("include_images must be a boolean"), v.description("`images[]`: the engines' images and the read pages' own")), false),
    include_image_descriptions: v.optional(v.pipe(v.boolean("include_image_descriptions must be a boolean"), v.description("Fill each image's description (title or alt text)")), false),
    include_favicon: v.optional(v.pipe(v.boolean("include_favicon must be a boolean"), v.description("`favicon` per result")), false),
    collections: v.optional(v.pipe(
      v.array(v.pipe(v.string("each of collections must be a string"), v.regex(COLLECTION_NAME, "each of collections must be a collection's name")), "collections must be an array"),
      v.minLength(1, "collections must name at least one collection"), v.maxLength(5, "collections takes at most 5 collections"),
      v.description("This account's collections to search beside the engines, each as one more engine (`collection:<name>` in `meta.backends`); their documents are merged with the web's results, each under its URL or, without one, `quarry://collections/{name}/documents/{id}` (GET /v1/collections/{name}/documents/{id} reads it)"),
    )),
    web: v.optional(v.pipe(v.boolean("web must be a boolean"), v.description("false: leave the web engines out and search only `collections`")), true),
  }),
  v.forward(v.partialCheck([["web"], ["collections"]], (input) => input.web !== false || Boolean(input.collections?.length), "web: false needs collections to search"), ["web"]),
  v.forward(
    v.partialCheck(
      [["start_date"], ["end_date"]],
      (input) => !input.start_date || !input.end_date || input.start_date <= input.end_date,
      "end_date must not be before start_date",
    ),
    ["end_date"],
  ),
  v.forward(
    v.partialCheck(
      [["freshness"], ["time_range"]],
      (input) => !input.freshness || !input.time_range || input.freshness[0] === input.time_range[0],
      "time_range and freshness disagree; send one of them",
    ),
    ["time_range"],
  ),
);
export type SearchRequest = v.InferOutput<typeof SearchBody>;

/** An option Quarry accepted but could not apply, in full or for the backends named (api.md §8). */
export const IgnoredOption = v.object({
  option: v.string(),
  reason: v.string(),
  backends: v.optional(v.array(v.string())),
});

export const SearchImage = v.object({
  url: v.string(),
  description: v.nullable(v.string()),
  /** The result (its `url`) the image belongs to. */
  result_url: v.string(),
});

export const SearchResponseSchema = v.object({
  meta: v.object({
    query: v.string(), results_count: Count, tokens_used: Count, duration_ms: Count, cached: v.boolean(),
    backends: v.record(v.string(), BackendStatus),
    topic: v.optional(v.picklist(["general", "news"])),
    country: v.optional(v.nullable(v.string())),
    undated: v.optional(v.picklist(["kept", "dropped"])),
    date_filter: v.optional(v.object({ start_date: v.nullable(v.string()), end_date: v.nullable(v.string()), out_of_range: Count, undated: Count, dated_from_pages: Count })),
    answer: v.optional(v.picklist(["extractive", "llm"])),
    pages: v.optional(v.pipe(
      v.object({ read: Count, failed: v.array(v.object({ url: v.string(), reason: v.string() })) }),
      v.description("When result pages were read (tiers above basic, answers, raw content, chunks, dates): how many were, and each that could not be, with why, so a null excerpt is explained"),
    )),
    ignored: v.array(IgnoredOption),
  }),
  answer: v.optional(v.nullable(v.string())),
  images: v.optional(v.array(SearchImage)),
  results: v.array(v.object({
    title: v.string(), url: v.string(), content: v.string(), score: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
    published_at: v.nullable(v.string()), source: v.string(), engines: v.array(v.string()),
    excerpt: v.nullable(v.string()), raw_content: v.nullable(v.string()),
    chunks: v.optional(v.array(v.string())),
    favicon: v.optional(v.nullable(v.string())),
  })),
});
