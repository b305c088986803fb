/**
 * SearXNG, operator-hosted metasearch, through its JSON API. The instance must list `json`
 * under `search.formats` in settings.yml, otherwise it answers 403.
 * https://docs.searxng.org/dev/search_api.html
 */
import * as v from "valibot";
import type { Backend, ParseOutcome, RawResult } from "./types.ts";
import { httpFailure, isWebUrl, parseFailure, parseJson, plainText, toIsoUtc, upstreamUrl, languageParts } from "./upstream.ts";

const Result = v.object({
  url: v.string(),
  title: v.optional(v.nullable(v.string()), ""),
  content: v.optional(v.nullable(v.string()), ""),
  publishedDate: v.optional(v.nullable(v.string()), null),
  // News and image engines set these; web engines mostly do not.
  img_src: v.optional(v.nullable(v.string()), null),
  thumbnail: v.optional(v.nullable(v.string()), null),
});

const Answer = v.object({
  results: v.array(v.unknown()),
  // [[engine name, reason], …]: the instance's own engines that failed this query.
  unresponsive_engines: v.optional(v.array(v.array(v.unknown())), []),
});

export const searxng: Backend = {
  about: {
    id: "searxng",
    kind: "web",
    defaultBaseUrl: null,
    needs: ["url"],
    docs: "https://docs.searxng.org/dev/search_api.html",
    // `language` takes a locale such as en-US, which the instance's engines map to their regions.
    supports: { news: true, countries: "any", dates: "window" },
  },

  buildRequest(query, cfg) {
    const { lang } = languageParts(query.language);
    const url = upstreamUrl(cfg.baseUrl, "/search", {
      q: query.query,
      format: "json",
      categories: query.topic === "news" ? "news" : "general",
      language: query.country ? `${lang}-${query.country}` : lang,
      time_range: query.freshness ?? undefined,
      pageno: query.page && query.page > 1 ? query.page : undefined,
    });
    return new Request(url, { headers: { accept: "application/json" } });
  },

  parseResponse(res, query): ParseOutcome {
    if (res.status === 403) {
      return {
        ok: false,
        error: { class: "blocked", message: "SearXNG refused format=json (enable json in search.formats)" },
      };
    }
    if (res.status < 200 || res.status > 299) return { ok: false, error: httpFailure(res, "SearXNG") };
    const json = parseJson(res.body);
    if (!json.ok) return { ok: false, error: parseFailure("SearXNG", "body is not JSON") };
    const answer = v.safeParse(Answer, json.value);
    if (!answer.success) return { ok: false, error: parseFailure("SearXNG", "no results array") };

    const results: RawResult[] = [];
    for (const item of answer.output.results) {
      if (results.length >= query.maxResults) break;
      const parsed = v.safeParse(Result, item);
      // Single odd items (infobox-like templates without a URL) are skipped, not fatal.
      if (!parsed.success || !isWebUrl(parsed.output.url)) continue;
      const r = parsed.output;
      const image = [r.img_src, r.thumbnail].find((u): u is string => !!u && isWebUrl(u));
      results.push({
        title: plainText(r.title ?? ""),
        url: r.url,
        content: plainText(r.content ?? ""),
        published_at: toIsoUtc(r.publishedDate),
        rank: results.length + 1,
        ...(image ? { image } : {}),
      });
    }
    const failed = answer.output.unresponsive_engines;
    if (results.length === 0 && failed.length > 0) {
      // An instance whose engines all failed answers 200 with nothing: report it, never silently empty.
      const names = failed.map((pair) => pair.map(String).join(": ")).join(", ");
      return { ok: false, error: { class: "http", message: `SearXNG engines failed: ${names}` } };
    }
    return { ok: true, results };
  },
};
