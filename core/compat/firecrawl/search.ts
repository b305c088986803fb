/**
 * Firecrawl search (v1 and v2) → native `POST /v1/search`. `limit` is `max_results` (at most
 * 20), `tbs` `qdr:*` a freshness, `lang` the language; `scrapeOptions.formats` with `markdown`
 * reads each result's whole page (tier `full`). News, images and country pass to native search
 * under its own names once it has them; until then they are named as not applied.
 */
import * as v from "valibot";
import { SearchBody } from "../../operations/search/schema.ts";
import { fieldsOf, type Ignored } from "../http.ts";
import { CLIENT_FIELDS, ScrapeOptions } from "./scrape.ts";

const NATIVE = fieldsOf(SearchBody);
const TBS: Record<string, string> = { h: "day", d: "day", w: "week", m: "month", y: "year" };
const BCP47 = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/;

export const FirecrawlSearchBody = v.looseObject({
  query: v.string("query must be a string"),
  limit: v.optional(v.nullable(v.pipe(v.number("limit must be a number"), v.integer("limit must be a whole number"), v.minValue(1, "limit must be at least 1")))),
  tbs: v.optional(v.nullable(v.string("tbs must be a string"))),
  lang: v.optional(v.nullable(v.string("lang must be a string"))),
  country: v.optional(v.nullable(v.string("country must be a string"))),
  sources: v.optional(v.nullable(v.array(v.union([v.string(), v.looseObject({ type: v.string() })]), "sources must be an array"))),
  includeDomains: v.optional(v.nullable(v.array(v.string(), "includeDomains must be an array of hostnames"))),
  excludeDomains: v.optional(v.nullable(v.array(v.string(), "excludeDomains must be an array of hostnames"))),
  scrapeOptions: v.optional(v.nullable(ScrapeOptions)),
});
export type FirecrawlSearchRequest = v.InferOutput<typeof FirecrawlSearchBody>;

export interface SearchPlan {
  native: Record<string, unknown>;
  withMarkdown: boolean;
  news: boolean;
  ignored: string[];
}

export function toNativeSearch(body: FirecrawlSearchRequest): SearchPlan {
  const ignored = new Set<string>();
  const native: Record<string, unknown> = { query: body.query, tier: "basic" };
  if (typeof body.limit === "number") {
    native.max_results = Math.min(20, body.limit);
    if (body.limit > 20) ignored.add("limit above 20");
  }
  if (body.tbs) {
    const m = /^qdr:([hdwmy])$/.exec(body.tbs);
    if (m) native.freshness = TBS[m[1]!];
    else ignored.add("tbs");
    if (m?.[1] === "h") ignored.add("tbs qdr:h (Quarry's finest freshness is a day)");
  }
  if (body.lang && body.lang !== "en") {
    if (BCP47.test(body.lang)) native.language = body.lang;
    else ignored.add("lang");
  }
  if (body.country && body.country.toLowerCase() !== "us") {
    if (NATIVE.has("country")) native.country = body.country;
    else ignored.add("country");
  }
  if (body.includeDomains?.length) native.include_domains = body.includeDomains;
  if (body.excludeDomains?.length) native.exclude_domains = body.excludeDomains;
  const sources = (body.sources ?? []).map((s) => (typeof s === "string" ? s : s.type));
  const news = sources.includes("news");
  if (news) {
    if (NATIVE.has("topic")) native.topic = "news";
    else ignored.add("sources.news");
  }
  if (sources.includes("images")) {
    if (NATIVE.has("include_images")) native.include_images = true;
    else ignored.add("sources.images");
  }
  for (const s of sources) if (!["web", "news", "images"].includes(s)) ignored.add(`sources.${s}`);
  const formats = (body.scrapeOptions?.formats ?? []).map((f) => (typeof f === "string" ? f : f.type));
  const withMarkdown = formats.includes("markdown");
  if (withMarkdown) native.tier = "full";
  for (const f of formats) if (f !== "markdown") ignored.add(`scrapeOptions.formats.${f}`);
  const known = new Set([...CLIENT_FIELDS, "query", "limit", "tbs", "lang", "country", "sources", "includeDomains", "excludeDomains", "scrapeOptions", "timeout", "ignoreInvalidURLs", "location", "filter"]);
  for (const [k, val] of Object.entries(body)) {
    if (!known.has(k) && val !== undefined && val !== null && val !== false && !(Array.isArray(val) && val.length === 0)) ignored.add(k);
  }
  if (body.filter) ignored.add("filter");
  if (body.location) ignored.add("location");
  return { native, withMarkdown, news: news && NATIVE.has("topic"), ignored: [...ignored].sort() };
}

export interface NativeSearch {
  meta: { ignored?: Ignored[]; [k: string]: unknown };
  results: Array<{ title: string; url: string; content: string; excerpt: string | null; raw_content: string | null; published_at: string | null }>;
}

/** One web result as Firecrawl lists it (v2 `SearchResultWeb`, v1 a `Document` with title and description). */
export function webResult(plan: SearchPlan, r: NativeSearch["results"][number], position: number): Record<string, unknown> {
  return {
    url: r.url,
    title: r.title,
    description: r.excerpt ?? r.content,
    position,
    ...(plan.withMarkdown ? { markdown: r.raw_content ?? "" } : {}),
    ...(r.published_at ? { date: r.published_at } : {}),
    metadata: { title: r.title, description: r.content, sourceURL: r.url, url: r.url, ...(r.published_at ? { publishedTime: r.published_at } : {}) },
  };
}
