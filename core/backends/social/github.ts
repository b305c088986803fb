/**
 * GitHub issue search (`GET /search/issues`): issues and pull requests, with their comments and
 * reactions counts. https://docs.github.com/en/rest/search/search#search-issues-and-pull-requests
 * - A token (`QUARRY_GITHUB_TOKEN`) is optional: without one the search limit is 10 requests a
 *   minute per IP, with one 30 per user.
 * - Rate limits: 403 or 429 with `x-ratelimit-remaining: 0` (primary; `x-ratelimit-reset` is
 *   epoch seconds) or a "secondary rate limit" message, with or without `retry-after`
 *   (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api).
 * - Discussions are not in the REST search (GraphQL only); an item whose `html_url` is a
 *   discussion is still typed `discussion`.
 * - `score` in items is search relevance, not engagement; it is ignored.
 */
import * as v from "valibot";
import type { BackendError, ParseOutcome, UpstreamResponse } from "../types.ts";
import { parseJson, parseFailure, httpFailure, retryAfterFromHeaders, toIsoUtc, upstreamUrl } from "../upstream.ts";
import { compact, count, markdownToText, snippetOf, webUrlOrNull } from "./text.ts";
import type { SocialBackend, SocialItem } from "./types.ts";

const Item = v.object({
  html_url: v.string(),
  number: v.number(),
  title: v.string(),
  body: v.nullish(v.string()),
  user: v.nullish(v.object({ login: v.string() })),
  comments: v.optional(v.number()),
  created_at: v.optional(v.string()),
  reactions: v.optional(v.object({ total_count: v.optional(v.number()) })),
});

const Answer = v.object({ items: v.array(v.unknown()), incomplete_results: v.optional(v.boolean()) });
const ErrorBody = v.object({ message: v.optional(v.string()) });

/** `https://github.com/owner/repo/issues/12` → owner/repo and what kind of thread it is. */
function threadOf(htmlUrl: string): { repo: string; kind: "issue" | "discussion" } | null {
  const m = /^https?:\/\/[^/]+\/([^/]+\/[^/]+)\/(issues|pull|discussions)\/\d+/.exec(htmlUrl);
  if (!m) return null;
  return { repo: m[1]!, kind: m[2] === "discussions" ? "discussion" : "issue" };
}

function githubFailure(res: UpstreamResponse): BackendError {
  const json = parseJson(res.body);
  const body = json.ok ? v.safeParse(ErrorBody, json.value) : null;
  const detail = body?.success && body.output.message ? `: ${body.output.message}` : "";
  const remaining = res.headers.get("x-ratelimit-remaining");
  const secondary = /secondary rate limit|abuse/i.test(detail);
  if ((res.status === 403 || res.status === 429) && (remaining === "0" || secondary || res.headers.has("retry-after"))) {
    let retry = retryAfterFromHeaders(res.headers);
    if (retry === undefined && remaining === "0") {
      // x-ratelimit-reset is an epoch; measure it against the answer's own Date to stay pure.
      const reset = Number(res.headers.get("x-ratelimit-reset"));
      const now = Date.parse(res.headers.get("date") ?? "");
      if (Number.isFinite(reset) && !Number.isNaN(now)) retry = Math.max(0, Math.ceil(reset - now / 1000));
    }
    const which = secondary ? "secondary rate limit" : "rate limit";
    return { class: "rate_limited", message: `GitHub ${which} reached${detail}`, ...(retry === undefined ? {} : { retryAfterSeconds: retry }) };
  }
  const failure = httpFailure(res, "GitHub");
  failure.message += detail;
  return failure;
}

export const github: SocialBackend = {
  about: {
    id: "github",
    kind: "social",
    defaultBaseUrl: "https://api.github.com",
    docs: "https://docs.github.com/en/rest/search/search#search-issues-and-pull-requests",
  },

  buildRequest(query, cfg) {
    const url = upstreamUrl(cfg.baseUrl, "/search/issues", {
      q: query.query,
      // Default order is best match; with a freshness window the newest come first.
      sort: query.freshness ? "created" : undefined,
      order: query.freshness ? "desc" : undefined,
      per_page: Math.min(Math.max(query.maxResults, 1), 100),
      page: query.page && query.page > 1 ? query.page : undefined,
    });
    const headers: Record<string, string> = {
      accept: "application/vnd.github+json",
      "x-github-api-version": "2022-11-28",
      "user-agent": "quarry-social-research",
    };
    if (cfg.token) headers.authorization = `Bearer ${cfg.token}`;
    return new Request(url, { headers });
  },

  parseResponse(res, query): ParseOutcome<SocialItem> {
    if (res.status < 200 || res.status > 299) return { ok: false, error: githubFailure(res) };
    const json = parseJson(res.body);
    if (!json.ok) return { ok: false, error: parseFailure("GitHub", "body is not JSON") };
    const answer = v.safeParse(Answer, json.value);
    if (!answer.success) return { ok: false, error: parseFailure("GitHub", "no items array") };
    const results: SocialItem[] = [];
    for (const raw of answer.output.items) {
      if (results.length >= query.maxResults) break;
      const parsed = v.safeParse(Item, raw);
      if (!parsed.success || !webUrlOrNull(parsed.output.html_url)) continue;
      const it = parsed.output;
      const thread = threadOf(it.html_url);
      if (!thread) continue;
      const text = markdownToText(it.body ?? "");
      results.push({
        id: `gh:${thread.repo}#${it.number}`,
        platform: "github",
        kind: thread.kind,
        title: it.title.trim(),
        snippet: snippetOf(text || it.title),
        text,
        url: it.html_url,
        linked_url: null,
        author: it.user?.login ?? null,
        community: thread.repo,
        published_at: toIsoUtc(it.created_at),
        engagement: compact({ comments: count(it.comments), reactions: count(it.reactions?.total_count) }),
      });
    }
    return { ok: true, results };
  },
};
