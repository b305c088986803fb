/**
 * Brave Search API, web and news results. Needs a subscription token (`QUARRY_BRAVE_KEY`).
 * https://api-dashboard.search.brave.com/app/documentation/web-search/get-started
 * https://api-dashboard.search.brave.com/app/documentation/news-search/get-started
 * `age` is display text ("1 month ago"); `page_age` is the ISO date we use. Both endpoints take
 * `country` (a fixed list) and `freshness` as pd/pw/pm/py or `YYYY-MM-DDtoYYYY-MM-DD`.
 */
import * as v from "valibot";
import type { Backend, BackendError, ParseOutcome, RawResult } from "./types.ts";
import { httpFailure, isWebUrl, languageParts, parseFailure, parseJson, plainText, toIsoUtc, upstreamUrl } from "./upstream.ts";

const FRESHNESS = { day: "pd", week: "pw", month: "pm", year: "py" } as const;
/** The `country` values Brave documents (it answers 422 to others). */
export const BRAVE_COUNTRIES = [
  "AR", "AT", "AU", "BE", "BR", "CA", "CH", "CL", "CN", "DE", "DK", "ES", "FI", "FR", "GB", "GR", "HK", "ID", "IN", "IT",
  "JP", "KR", "MX", "MY", "NL", "NO", "NZ", "PH", "PL", "PT", "RU", "SA", "SE", "SG", "TR", "TW", "US", "ZA",
] as const;

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];

/**
 * A date from `age` when `page_age` is missing: Brave writes older ones as "March 3, 2019" and
 * recent ones as "5 hours ago" / "2 days ago", the latter counted back from the answer's own
 * Date header (so the parser stays pure). Weeks, months and years ago are too coarse to filter by.
 */
export function dateFromAge(age: string | undefined, headers: Headers): string | null {
  const text = age?.trim().toLowerCase() ?? "";
  const absolute = /^([a-z]+) (\d{1,2}), (\d{4})$/.exec(text);
  if (absolute) {
    const month = MONTHS.indexOf(absolute[1]!);
    if (month < 0) return null;
    const at = new Date(Date.UTC(Number(absolute[3]), month, Number(absolute[2])));
    return at.getUTCDate() === Number(absolute[2]) ? at.toISOString().replace(/\.\d{3}Z$/, "Z") : null;
  }
  const relative = /^(\d{1,3}) (minute|hour|day)s? ago$/.exec(text);
  const served = Date.parse(headers.get("date") ?? "");
  if (!relative || Number.isNaN(served)) return null;
  const unit = { minute: 60_000, hour: 3_600_000, day: 86_400_000 }[relative[2] as "minute" | "hour" | "day"];
  return new Date(served - Number(relative[1]) * unit).toISOString().replace(/\.\d{3}Z$/, "Z");
}

const WebResult = v.object({
  url: v.string(),
  title: v.optional(v.string(), ""),
  description: v.optional(v.string(), ""),
  page_age: v.optional(v.string()),
  age: v.optional(v.string()),
  thumbnail: v.optional(v.object({ src: v.optional(v.string()) })),
  meta_url: v.optional(v.object({ favicon: v.optional(v.string()) })),
});

const Answer = v.object({
  type: v.optional(v.string()),
  // Absent when the query has no web results (e.g. only videos or nothing at all).
  web: v.optional(v.object({ results: v.optional(v.array(v.unknown()), []) })),
  // The news endpoint answers `{type: "news", results: [...]}`.
  results: v.optional(v.array(v.unknown())),
});

const ErrorBody = v.object({
  error: v.object({ code: v.optional(v.string()), detail: v.optional(v.string()) }),
});

/** Brave's error body names the problem (e.g. SUBSCRIPTION_TOKEN_INVALID); keep it in the message. */
function braveFailure(res: { status: number; headers: Headers; body: string }): BackendError {
  const failure = httpFailure(res, "Brave");
  const json = parseJson(res.body);
  const body = json.ok ? v.safeParse(ErrorBody, json.value) : null;
  if (body?.success) {
    const { code, detail } = body.output.error;
    failure.message += `: ${[code, detail].filter(Boolean).join(" ")}`;
  }
  if (failure.class === "rate_limited" && failure.retryAfterSeconds === undefined) {
    // Brave sends no Retry-After; X-RateLimit-Reset lists seconds until each window resets, shortest first.
    const reset = Number(res.headers.get("x-ratelimit-reset")?.split(",")[0]);
    if (Number.isFinite(reset) && reset >= 0) failure.retryAfterSeconds = Math.ceil(reset);
  }
  return failure;
}

export const brave: Backend = {
  about: {
    id: "brave",
    kind: "web",
    defaultBaseUrl: "https://api.search.brave.com",
    needs: ["key"],
    docs: "https://api-dashboard.search.brave.com/app/documentation/web-search/query",
    supports: { news: true, countries: BRAVE_COUNTRIES, dates: "exact" },
  },

  buildRequest(query, cfg) {
    const { lang, region } = languageParts(query.language);
    const news = query.topic === "news";
    const count = Math.min(Math.max(query.maxResults, 1), 20); // API maximum per page
    const range = query.dateRange ? `${query.dateRange.from}to${query.dateRange.to}` : undefined;
    const country = query.country ?? region?.toUpperCase();
    const url = upstreamUrl(cfg.baseUrl, news ? "/res/v1/news/search" : "/res/v1/web/search", {
      q: query.query,
      count,
      // `offset` counts pages of `count` results, 0–9.
      offset: query.page && query.page > 1 ? Math.min(query.page - 1, 9) : undefined,
      search_lang: lang,
      // Lower case, as Brave echoes it in `query.country`.
      country: country && (BRAVE_COUNTRIES as readonly string[]).includes(country) ? country.toLowerCase() : undefined,
      freshness: range ?? (query.freshness ? FRESHNESS[query.freshness] : undefined),
    });
    return new Request(url, {
      headers: { accept: "application/json", "x-subscription-token": cfg.key ?? "" },
    });
  },

  parseResponse(res, query): ParseOutcome {
    if (res.status < 200 || res.status > 299) return { ok: false, error: braveFailure(res) };
    const json = parseJson(res.body);
    if (!json.ok) return { ok: false, error: parseFailure("Brave", "body is not JSON") };
    const answer = v.safeParse(Answer, json.value);
    const wanted = query.topic === "news" ? "news" : "search";
    if (!answer.success || answer.output.type !== wanted) {
      return { ok: false, error: parseFailure("Brave", `not a ${wanted === "news" ? "news" : "web"} search answer`) };
    }
    const results: RawResult[] = [];
    const items = wanted === "news" ? (answer.output.results ?? []) : (answer.output.web?.results ?? []);
    for (const item of items) {
      if (results.length >= query.maxResults) break;
      const parsed = v.safeParse(WebResult, item);
      if (!parsed.success || !isWebUrl(parsed.output.url)) continue;
      const r = parsed.output;
      results.push({
        title: plainText(r.title),
        url: r.url,
        content: plainText(r.description),
        published_at: toIsoUtc(r.page_age) ?? dateFromAge(r.age, res.headers),
        rank: results.length + 1,
        ...(r.thumbnail?.src && isWebUrl(r.thumbnail.src) ? { image: r.thumbnail.src } : {}),
        ...(r.meta_url?.favicon && isWebUrl(r.meta_url.favicon) ? { favicon: r.meta_url.favicon } : {}),
      });
    }
    return { ok: true, results };
  },
};
