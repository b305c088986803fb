/**
 * Stack Exchange API 2.3, `/search/advanced` (questions). https://api.stackexchange.com/docs/advanced-search
 * - The site is `stackoverflow` unless the base URL carries `?site=…` (QUARRY_STACKEXCHANGE_URL
 *   = `https://api.stackexchange.com?site=superuser`); an app key (`QUARRY_STACKEXCHANGE_KEY`)
 *   is optional and raises the daily quota from 300 to 10,000.
 * - Every answer may carry `backoff` (seconds): the method must not be called again before it
 *   passes (https://api.stackexchange.com/docs/throttle). We answer it as `rate_limited` with
 *   that many seconds, so the breaker suspends the backend exactly as asked.
 * - Errors come as `{error_id, error_name, error_message}`; `throttle_violation` (502) says in
 *   its message how many seconds remain.
 * - Titles arrive HTML-escaped; `filter=withbody` adds the question body as HTML.
 */
import * as v from "valibot";
import type { BackendConfig, BackendError, ParseOutcome, UpstreamResponse } from "../types.ts";
import { httpFailure, parseFailure, parseJson, plainText, upstreamUrl } from "../upstream.ts";
import { compact, count, htmlToText, isoFromEpochSeconds, snippetOf, webUrlOrNull } from "./text.ts";
import type { SocialBackend, SocialItem, SocialReply } from "./types.ts";

const Owner = v.optional(v.object({ display_name: v.optional(v.string()) }));

const Question = v.object({
  question_id: v.number(),
  title: v.string(),
  link: v.string(),
  body: v.optional(v.string()),
  owner: Owner,
  tags: v.optional(v.array(v.string()), []),
  score: v.optional(v.number()),
  answer_count: v.optional(v.number()),
  view_count: v.optional(v.number()),
  creation_date: v.optional(v.number()),
});

const Wrapper = v.object({
  items: v.optional(v.array(v.unknown())),
  backoff: v.optional(v.number()),
  quota_remaining: v.optional(v.number()),
  error_id: v.optional(v.number()),
  error_name: v.optional(v.string()),
  error_message: v.optional(v.string()),
});

const Answer = v.object({
  answer_id: v.number(),
  question_id: v.number(),
  body: v.optional(v.string()),
  score: v.optional(v.number()),
  is_accepted: v.optional(v.boolean()),
  owner: Owner,
});

/** `site` from the base URL's query (`?site=superuser`), else Stack Overflow. */
export function siteOf(cfg: BackendConfig): string {
  return new URL(cfg.baseUrl).searchParams.get("site")?.trim() || "stackoverflow";
}

function sePostId(link: string, id: number): string {
  const host = URL.canParse(link) ? new URL(link).hostname.replace(/^www\./, "") : "stackoverflow.com";
  return host === "stackoverflow.com" ? `se:${id}` : `se:${host}:${id}`;
}

/** The error or backoff in a parsed wrapper, as a backend failure; null when there is none. */
function wrapperFailure(w: v.InferOutput<typeof Wrapper>, status: number): BackendError | null {
  if (w.error_id !== undefined) {
    const message = `Stack Exchange error ${w.error_id} ${w.error_name ?? ""}: ${w.error_message ?? ""}`.trim();
    if (w.error_name === "throttle_violation" || w.error_id === 502) {
      const seconds = /(\d+)\s*seconds?/.exec(w.error_message ?? "")?.[1];
      return { class: "rate_limited", message, ...(seconds ? { retryAfterSeconds: Number(seconds) } : {}) };
    }
    if (w.error_name === "access_denied" || w.error_name === "access_token_required" || w.error_id === 401 || w.error_id === 403) {
      return { class: "blocked", message };
    }
    return { class: "http", message: `${message} (HTTP ${status})` };
  }
  if (w.backoff !== undefined && w.backoff > 0) {
    return {
      class: "rate_limited",
      message: `Stack Exchange asked to back off ${w.backoff} s (quota_remaining ${w.quota_remaining ?? "unknown"})`,
      retryAfterSeconds: Math.ceil(w.backoff),
    };
  }
  return null;
}

function parseWrapper(res: UpstreamResponse): { ok: true; items: unknown[] } | { ok: false; error: BackendError } {
  const json = parseJson(res.body);
  const wrapper = json.ok ? v.safeParse(Wrapper, json.value) : null;
  if (!wrapper?.success) {
    if (res.status < 200 || res.status > 299) return { ok: false, error: httpFailure(res, "Stack Exchange") };
    return { ok: false, error: parseFailure("Stack Exchange", json.ok ? "unexpected answer shape" : "body is not JSON") };
  }
  const failure = wrapperFailure(wrapper.output, res.status);
  if (failure) return { ok: false, error: failure };
  if (res.status < 200 || res.status > 299) return { ok: false, error: httpFailure(res, "Stack Exchange") };
  if (!wrapper.output.items) return { ok: false, error: parseFailure("Stack Exchange", "no items array") };
  return { ok: true, items: wrapper.output.items };
}

export const stackexchange: SocialBackend = {
  about: {
    id: "stackexchange",
    kind: "social",
    defaultBaseUrl: "https://api.stackexchange.com",
    docs: "https://api.stackexchange.com/docs/advanced-search",
  },

  buildRequest(query, cfg) {
    const url = upstreamUrl(cfg.baseUrl, "/2.3/search/advanced", {
      q: query.query,
      site: siteOf(cfg),
      order: "desc",
      // With a freshness window the newest come first; the operation filters by date.
      sort: query.freshness ? "creation" : "relevance",
      pagesize: Math.min(Math.max(query.maxResults, 1), 100),
      page: query.page && query.page > 1 ? query.page : undefined,
      filter: "withbody",
      key: cfg.key,
    });
    return new Request(url, { headers: { accept: "application/json" } });
  },

  parseResponse(res, query): ParseOutcome<SocialItem> {
    const wrapper = parseWrapper(res);
    if (!wrapper.ok) return wrapper;
    const results: SocialItem[] = [];
    for (const raw of wrapper.items) {
      if (results.length >= query.maxResults) break;
      const parsed = v.safeParse(Question, raw);
      if (!parsed.success || !webUrlOrNull(parsed.output.link)) continue;
      const q = parsed.output;
      const text = htmlToText(q.body ?? "");
      const title = plainText(q.title);
      results.push({
        id: sePostId(q.link, q.question_id),
        platform: "stackexchange",
        kind: "question",
        title,
        snippet: snippetOf(text || title),
        text,
        url: q.link,
        linked_url: null,
        author: q.owner?.display_name ? plainText(q.owner.display_name) : null,
        community: q.tags[0] ?? null,
        published_at: isoFromEpochSeconds(q.creation_date),
        engagement: compact({ score: q.score, answers: count(q.answer_count), views: count(q.view_count) }),
      });
    }
    return { ok: true, results };
  },
};

/* ---- best answers of a few questions, in one call ---- */

/** `GET /2.3/questions/{ids}/answers`, best voted first, with bodies. */
export function buildAnswersRequest(questionIds: readonly number[], cfg: BackendConfig): Request {
  const ids = questionIds.slice(0, 100).join(";");
  const url = upstreamUrl(cfg.baseUrl, `/2.3/questions/${ids}/answers`, {
    site: siteOf(cfg),
    order: "desc",
    sort: "votes",
    pagesize: 30,
    filter: "withbody",
    key: cfg.key,
  });
  return new Request(url, { headers: { accept: "application/json" } });
}

/**
 * Answers grouped by question id, accepted first then by score. `questionUrls` gives each
 * question's page: an answer's anchor on it is `#<answer_id>`.
 */
export function parseAnswers(res: UpstreamResponse, questionUrls: ReadonlyMap<number, string>): Map<number, SocialReply[]> | null {
  const wrapper = parseWrapper(res);
  if (!wrapper.ok) return null;
  const answers = wrapper.items.flatMap((raw) => {
    const parsed = v.safeParse(Answer, raw);
    return parsed.success ? [parsed.output] : [];
  });
  answers.sort((a, b) => Number(b.is_accepted ?? false) - Number(a.is_accepted ?? false) || (b.score ?? 0) - (a.score ?? 0));
  const byQuestion = new Map<number, SocialReply[]>();
  for (const a of answers) {
    const base = questionUrls.get(a.question_id);
    const text = htmlToText(a.body ?? "");
    if (!base || !text) continue;
    const list = byQuestion.get(a.question_id) ?? [];
    list.push({
      id: sePostId(base, a.answer_id),
      author: a.owner?.display_name ? plainText(a.owner.display_name) : null,
      text,
      score: a.score ?? null,
      url: `${base.split("#")[0]}#${a.answer_id}`,
    });
    byQuestion.set(a.question_id, list);
  }
  return byQuestion;
}
