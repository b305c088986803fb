/**
 * Brave Search API, web results. Needs a subscription token (`QUARRY_BRAVE_KEY`).
 * https://api-dashboard.search.brave.com/app/documentation/web-search/get-started
 * `age` is display text ("1 month ago"); `page_age` is the ISO date we use.
 */
import * as v from "valibot";
import type { Backend, BackendError, ParseOutcome, RawResult } from "./types.ts";
import { httpFailure, isWebUrl, languageParts, parseFailure, parseJson, plainText, toIsoUtc, upstreamUrl } from "./upstream.ts";

const FRESHNESS = { day: "pd", week: "pw", month: "pm", year: "py" } as const;

const WebResult = v.object({
  url: v.string(),
  title: v.optional(v.string(), ""),
  description: v.optional(v.string(), ""),
  page_age: v.optional(v.string()),
});

const Answer = v.object({
  type: v.optional(v.string()),
  // Absent when the query has no web results (e.g. only videos or nothing at all).
  web: v.optional(v.object({ results: v.optional(v.array(v.unknown()), []) })),
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
  },

  buildRequest(query, cfg) {
    const { lang, region } = languageParts(query.language);
    const count = Math.min(Math.max(query.maxResults, 1), 20); // API maximum per page
    const url = upstreamUrl(cfg.baseUrl, "/res/v1/web/search", {
      q: query.query,
      count,
      // `offset` counts pages of `count` results, 0–9.
      offset: query.page && query.page > 1 ? Math.min(query.page - 1, 9) : undefined,
      search_lang: lang,
      country: region ?? undefined,
      freshness: query.freshness ? FRESHNESS[query.freshness] : undefined,
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
    if (!answer.success || answer.output.type !== "search") {
      return { ok: false, error: parseFailure("Brave", "not a web search answer") };
    }
    const results: RawResult[] = [];
    for (const item of answer.output.web?.results ?? []) {
      if (results.length >= query.maxResults) break;
      const parsed = v.safeParse(WebResult, item);
      if (!parsed.success || !isWebUrl(parsed.output.url)) continue;
      const r = parsed.output;
      results.push({
        title: plainText(r.title),
        url: r.url,
        content: plainText(r.description),
        published_at: toIsoUtc(r.page_age),
        rank: results.length + 1,
      });
    }
    return { ok: true, results };
  },
};
