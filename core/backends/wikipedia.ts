/**
 * Wikipedia through the MediaWiki action API: full-text search as a generator, so each hit
 * comes back as a page with its URL, short description and lead-section extract in one call.
 * https://www.mediawiki.org/wiki/API:Search (generator form) and API:Query
 * Shapes to expect (formatversion=2): `query.pages[]` is NOT ordered by `index`, the rank;
 * an empty result has no `query` key at all.
 */
import * as v from "valibot";
import type { Backend, ParseOutcome, RawResult } from "./types.ts";
import { httpFailure, isWebUrl, languageParts, parseFailure, parseJson, plainText, upstreamUrl, withLanguage } from "./upstream.ts";

const Page = v.object({
  title: v.string(),
  index: v.optional(v.number()),
  missing: v.optional(v.boolean()),
  fullurl: v.optional(v.string()),
  extract: v.optional(v.string()),
  description: v.optional(v.string()),
  // pageterms (wbptterms=description) in older clients, e.g. the recorded app request.
  terms: v.optional(v.object({ description: v.optional(v.array(v.string())) })),
  // prop=pageimages: the article's lead image, scaled.
  thumbnail: v.optional(v.object({ source: v.string() })),
});

const Answer = v.object({
  batchcomplete: v.optional(v.unknown()),
  error: v.optional(v.object({ code: v.string(), info: v.optional(v.string()) })),
  query: v.optional(v.object({ pages: v.optional(v.array(v.unknown()), []) })),
});

/** Article URL built from the title, as MediaWiki spells it: spaces → underscores, `/` and `:` kept. */
export function articleUrl(language: string, title: string): string {
  const path = encodeURIComponent(title.replaceAll(" ", "_")).replace(/%2F/g, "/").replace(/%3A/g, ":").replace(/%2C/g, ",");
  return `https://${languageParts(language).lang}.wikipedia.org/wiki/${path}`;
}

export const wikipedia: Backend = {
  about: {
    id: "wikipedia",
    kind: "web",
    defaultBaseUrl: "https://{lang}.wikipedia.org",
    docs: "https://www.mediawiki.org/wiki/API:Search",
  },

  buildRequest(query, cfg) {
    const limit = Math.min(Math.max(query.maxResults, 1), 20); // extracts allows ≤ 20 pages per call
    const url = upstreamUrl(withLanguage(cfg.baseUrl, query.language), "/w/api.php", {
      action: "query",
      format: "json",
      formatversion: 2,
      generator: "search",
      gsrsearch: query.query,
      gsrnamespace: 0,
      gsrlimit: limit,
      gsroffset: query.page && query.page > 1 ? (query.page - 1) * limit : undefined,
      prop: "info|description|extracts|pageimages",
      inprop: "url",
      exintro: 1,
      explaintext: 1,
      exsentences: 2,
      exlimit: limit,
      piprop: "thumbnail",
      pithumbsize: 320,
      pilimit: limit,
    });
    // Wikimedia asks API clients to identify themselves; Api-User-Agent works where User-Agent cannot be set.
    return new Request(url, { headers: { accept: "application/json", "api-user-agent": "Quarry search API" } });
  },

  parseResponse(res, query): ParseOutcome {
    if (res.status < 200 || res.status > 299) return { ok: false, error: httpFailure(res, "Wikipedia") };
    const json = parseJson(res.body);
    if (!json.ok) return { ok: false, error: parseFailure("Wikipedia", "body is not JSON") };
    const answer = v.safeParse(Answer, json.value);
    if (!answer.success) return { ok: false, error: parseFailure("Wikipedia", "unexpected answer shape") };
    const { error, query: found, batchcomplete } = answer.output;
    if (error) {
      const throttled = error.code === "ratelimited" || error.code === "maxlag";
      return {
        ok: false,
        error: { class: throttled ? "rate_limited" : "http", message: `Wikipedia API error ${error.code}: ${error.info ?? ""}`.trim() },
      };
    }
    if (!found) {
      // No `query` key is how an empty search answers; a body without batchcomplete is something else.
      return batchcomplete === undefined
        ? { ok: false, error: parseFailure("Wikipedia", "neither query nor batchcomplete in answer") }
        : { ok: true, results: [] };
    }

    const pages = found.pages
      .map((item, order) => ({ parsed: v.safeParse(Page, item), order }))
      .flatMap(({ parsed, order }) => (parsed.success && !parsed.output.missing ? [{ page: parsed.output, order }] : []))
      .sort((a, b) => (a.page.index ?? Infinity) - (b.page.index ?? Infinity) || a.order - b.order);

    const results: RawResult[] = pages.slice(0, query.maxResults).map(({ page }, i) => ({
      title: page.title,
      url: page.fullurl && isWebUrl(page.fullurl) ? page.fullurl : articleUrl(query.language, page.title),
      content: plainText(page.extract || page.description || page.terms?.description?.[0] || ""),
      published_at: null, // articles are living documents; last-edit time is not a publication date
      rank: i + 1,
      ...(page.thumbnail && isWebUrl(page.thumbnail.source) ? { image: page.thumbnail.source } : {}),
    }));
    return { ok: true, results };
  },
};
