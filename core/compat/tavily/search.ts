/**
 * Tavily `POST /search` → native `POST /v1/search`. Tavily options that native search accepts
 * under the same name (api.md §8: include_answer, include_raw_content, chunks_per_source,
 * start_date/end_date, topic, country, include_images, include_favicon) pass straight through as
 * soon as the native schema has them; until then `include_raw_content` reads whole pages through
 * tier `full`, and every option Quarry cannot honour is named in `quarry.ignored`.
 */
import * as v from "valibot";
import type { AppEnv } from "../../gateway/context.ts";
import type { Context } from "hono";
import { SearchBody } from "../../operations/search/schema.ts";
import { authorizationOf, type Dispatch } from "../dispatch.ts";
import { asIgnored, bodyOf, fieldsOf, ignoredOptions, readBody, secondsSince, type Ignored } from "../http.ts";

const flexible = v.optional(v.nullable(v.unknown()));
const stringList = v.optional(v.nullable(v.array(v.string("each domain must be a string"), "domains must be an array of strings")));

export const TavilySearchBody = v.looseObject({
  query: v.string("query must be a string"),
  api_key: v.optional(v.nullable(v.string())),
  search_depth: v.optional(v.nullable(v.picklist(["basic", "advanced", "fast", "ultra-fast"], "search_depth must be basic, advanced, fast or ultra-fast"))),
  topic: v.optional(v.nullable(v.string("topic must be a string"))),
  time_range: v.optional(v.nullable(v.picklist(["day", "week", "month", "year", "d", "w", "m", "y"], "time_range must be day, week, month or year"))),
  days: v.optional(v.nullable(v.number("days must be a number"))),
  max_results: v.optional(v.nullable(v.pipe(v.number("max_results must be a number"), v.integer("max_results must be a whole number"), v.minValue(0, "max_results must be at least 0"), v.maxValue(20, "max_results must be at most 20")))),
  include_domains: stringList,
  exclude_domains: stringList,
  include_answer: v.optional(v.nullable(v.union([v.boolean(), v.picklist(["basic", "advanced"])], "include_answer must be a boolean, basic or advanced"))),
  include_raw_content: v.optional(v.nullable(v.union([v.boolean(), v.picklist(["markdown", "text"])], "include_raw_content must be a boolean, markdown or text"))),
  include_images: flexible,
  include_favicon: flexible,
  include_usage: flexible,
});
export type TavilySearchRequest = v.InferOutput<typeof TavilySearchBody>;

/** The fields native search accepts today: what passes straight through follows the schema. */
const NATIVE = fieldsOf(SearchBody);
/** Tavily names that are native names too (api.md §8), passed through as soon as native search has them. */
const SAME_NAME = ["include_answer", "include_raw_content", "chunks_per_source", "start_date", "end_date", "topic", "country", "include_images", "include_image_descriptions", "include_favicon"];
const FRESHNESS: Record<string, string> = { d: "day", w: "week", m: "month", y: "year", day: "day", week: "week", month: "month", year: "year" };

export interface NativeSearchPlan {
  native: Record<string, unknown>;
  honoured: Set<string>;
  /** Whole pages are read through tier `full` because native search has no include_raw_content yet. */
  rawFromFullTier: boolean;
}

export function toNativeSearch(body: TavilySearchRequest): NativeSearchPlan {
  const honoured = new Set(["query", "api_key", "search_depth", "max_results", "include_domains", "exclude_domains", "time_range", "include_usage"]);
  const native: Record<string, unknown> = { query: body.query };
  native.tier = body.search_depth === "advanced" ? "summary" : "basic";
  if (body.max_results !== undefined && body.max_results !== null) native.max_results = Math.max(1, body.max_results);
  if (body.include_domains?.length) native.include_domains = body.include_domains;
  if (body.exclude_domains?.length) native.exclude_domains = body.exclude_domains;
  if (body.time_range) native.freshness = FRESHNESS[body.time_range];
  else if (typeof body.days === "number" && body.days > 0 && !NATIVE.has("start_date")) {
    // `days` (Tavily's news window) as the nearest freshness bucket.
    native.freshness = body.days <= 1 ? "day" : body.days <= 7 ? "week" : body.days <= 31 ? "month" : "year";
    honoured.add("days");
  }
  const given = body as Record<string, unknown>;
  for (const name of SAME_NAME) {
    const value = given[name];
    if (value === undefined || value === null || !NATIVE.has(name)) continue;
    if (name === "topic" && !["general", "news", "finance"].includes(String(value))) continue; // unknown topics: named as ignored
    native[name] = value;
    honoured.add(name);
  }
  if (body.topic === "general") honoured.add("topic");
  let rawFromFullTier = false;
  if (body.include_raw_content && !NATIVE.has("include_raw_content")) {
    native.tier = "full";
    rawFromFullTier = true;
    honoured.add("include_raw_content");
  }
  return { native, honoured, rawFromFullTier };
}

interface NativeResult {
  title: string; url: string; content: string; score: number; published_at: string | null;
  excerpt: string | null; raw_content: string | null; chunks?: string[]; favicon?: string | null;
}
interface NativeSearch {
  meta: { backends: Record<string, unknown>; ignored?: Ignored[]; [k: string]: unknown };
  results: NativeResult[];
  answer?: string | null;
  images?: Array<{ url: string; description: string | null; result_url: string }>;
}

/** Tavily's chunks are one `content` string, the chunks joined by its ` [...] ` separator. */
const CHUNK_SEPARATOR = " [...] ";

export function fromNativeSearch(body: TavilySearchRequest, plan: NativeSearchPlan, res: NativeSearch, requestId: string, seconds: number) {
  const wantRaw = Boolean(body.include_raw_content);
  const ignored = [...asIgnored(ignoredOptions(body as Record<string, unknown>, plan.honoured)), ...(res.meta.ignored ?? [])];
  const described = (body as Record<string, unknown>).include_image_descriptions === true;
  const images = (res.images ?? []).map((i) => (described ? { url: i.url, description: i.description } : i.url));
  return {
    query: body.query,
    ...(body.include_answer ? { answer: res.answer ?? null } : {}),
    images,
    results: res.results.map((r) => ({
      title: r.title,
      url: r.url,
      content: r.chunks?.length ? r.chunks.join(CHUNK_SEPARATOR) : r.excerpt ?? r.content,
      score: r.score,
      raw_content: wantRaw ? r.raw_content : null,
      ...(r.published_at ? { published_date: r.published_at } : {}),
      ...(r.favicon !== undefined ? { favicon: r.favicon } : {}),
      ...((res.images ?? []).some((i) => i.result_url === r.url) ? { images: (res.images ?? []).filter((i) => i.result_url === r.url).map((i) => (described ? { url: i.url, description: i.description } : i.url)) } : {}),
    })),
    response_time: seconds,
    request_id: requestId,
    ...(body.include_usage ? { usage: { credits: 1 } } : {}),
    quarry: { ignored, tier: plan.native.tier, meta: res.meta },
  };
}

export function tavilySearch(dispatch: Dispatch, now: () => number) {
  return async (c: Context<AppEnv>) => {
    const body = await readBody(c, TavilySearchBody);
    const plan = toNativeSearch(body);
    const answer = await dispatch(c, { method: "POST", path: "/v1/search", body: plan.native, authorization: authorizationOf(c, body.api_key) });
    const native = bodyOf<NativeSearch>(answer);
    return c.json(fromNativeSearch(body, plan, native, c.get("requestId") ?? "", secondsSince(c.get("startedAt") ?? now(), now())));
  };
}
