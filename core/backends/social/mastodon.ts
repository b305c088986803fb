/**
 * Mastodon status search (`GET /api/v2/search?type=statuses`) on the operator's instance.
 * https://docs.joinmastodon.org/methods/search/#v2
 * Needs `QUARRY_MASTODON_URL` (the instance) and `QUARRY_MASTODON_TOKEN` (an access token with
 * `read:search`): full-text status search answers only signed-in users, and only finds posts
 * the instance knows and whose authors opted in to search.
 * Shapes: 2026 answers add a top-level `collections` array and `quotes_count` on statuses;
 * boosts carry the original in `reblog`. Rate limits: 429 with `X-RateLimit-Reset` (ISO time).
 */
import * as v from "valibot";
import type { ParseOutcome, UpstreamResponse } from "../types.ts";
import { httpFailure, parseFailure, parseJson, toIsoUtc, upstreamUrl } from "../upstream.ts";
import { compact, count, htmlToText, snippetOf, titleFrom, webUrlOrNull } from "./text.ts";
import type { SocialBackend, SocialItem } from "./types.ts";

interface StatusShape {
  id: string;
  uri: string;
  url?: string | null;
  created_at: string;
  in_reply_to_id?: string | null;
  spoiler_text?: string;
  content: string;
  account: { acct: string; url?: string };
  replies_count?: number;
  reblogs_count?: number;
  favourites_count?: number;
  quotes_count?: number;
  card?: { url: string; type?: string } | null;
  reblog?: StatusShape | null;
}

const Status: v.GenericSchema<StatusShape> = v.object({
  id: v.string(),
  uri: v.string(),
  url: v.nullish(v.string()),
  created_at: v.string(),
  in_reply_to_id: v.nullish(v.string()),
  spoiler_text: v.optional(v.string()),
  content: v.string(),
  account: v.object({ acct: v.string(), url: v.optional(v.string()) }),
  replies_count: v.optional(v.number()),
  reblogs_count: v.optional(v.number()),
  favourites_count: v.optional(v.number()),
  quotes_count: v.optional(v.number()),
  card: v.nullish(v.object({ url: v.string(), type: v.optional(v.string()) })),
  reblog: v.nullish(v.lazy(() => Status)),
});

const Answer = v.object({ statuses: v.array(v.unknown()) });
const ErrorBody = v.object({ error: v.string() });

/** `user@host` or a local `user` (then the host of the account URL). */
function instanceOf(status: StatusShape): string | null {
  const at = status.account.acct.split("@")[1];
  if (at) return at;
  const page = status.account.url;
  return page && URL.canParse(page) ? new URL(page).hostname : null;
}

function mastodonFailure(res: UpstreamResponse) {
  const failure = httpFailure(res, "Mastodon");
  const json = parseJson(res.body);
  const body = json.ok ? v.safeParse(ErrorBody, json.value) : null;
  if (body?.success) failure.message += `: ${body.output.error}`;
  if (failure.class === "rate_limited" && failure.retryAfterSeconds === undefined) {
    const reset = Date.parse(res.headers.get("x-ratelimit-reset") ?? "");
    const now = Date.parse(res.headers.get("date") ?? "");
    if (!Number.isNaN(reset) && !Number.isNaN(now)) failure.retryAfterSeconds = Math.max(0, Math.ceil((reset - now) / 1000));
  }
  return failure;
}

export const mastodon: SocialBackend = {
  about: {
    id: "mastodon",
    kind: "social",
    defaultBaseUrl: null,
    needs: ["url", "token"],
    docs: "https://docs.joinmastodon.org/methods/search/#v2",
  },

  buildRequest(query, cfg) {
    const limit = Math.min(Math.max(query.maxResults, 1), 40); // the API's maximum
    const url = upstreamUrl(cfg.baseUrl, "/api/v2/search", {
      q: query.query,
      type: "statuses",
      limit,
      offset: query.page && query.page > 1 ? (query.page - 1) * limit : undefined,
    });
    return new Request(url, { headers: { accept: "application/json", authorization: `Bearer ${cfg.token ?? ""}` } });
  },

  parseResponse(res, query): ParseOutcome<SocialItem> {
    if (res.status < 200 || res.status > 299) return { ok: false, error: mastodonFailure(res) };
    const json = parseJson(res.body);
    if (!json.ok) return { ok: false, error: parseFailure("Mastodon", "body is not JSON") };
    const answer = v.safeParse(Answer, json.value);
    if (!answer.success) return { ok: false, error: parseFailure("Mastodon", "no statuses array") };
    const results: SocialItem[] = [];
    for (const raw of answer.output.statuses) {
      if (results.length >= query.maxResults) break;
      const parsed = v.safeParse(Status, raw);
      if (!parsed.success) continue;
      const s = parsed.output.reblog ?? parsed.output; // a boost stands for the boosted post
      const url = webUrlOrNull(s.url) ?? webUrlOrNull(s.uri);
      if (!url) continue;
      const body = htmlToText(s.content);
      const text = s.spoiler_text ? `${s.spoiler_text.trim()}\n${body}` : body;
      results.push({
        id: `mastodon:${s.uri.replace(/^https?:\/\//, "")}`,
        platform: "mastodon",
        kind: s.in_reply_to_id ? "comment" : "post",
        title: titleFrom(text),
        snippet: snippetOf(text),
        text,
        url,
        linked_url: s.card ? webUrlOrNull(s.card.url) : null,
        author: s.account.acct,
        community: instanceOf(s),
        published_at: toIsoUtc(s.created_at),
        engagement: compact({
          comments: count(s.replies_count),
          reposts: s.reblogs_count === undefined && s.quotes_count === undefined ? undefined : (count(s.reblogs_count) ?? 0) + (count(s.quotes_count) ?? 0),
          likes: count(s.favourites_count),
        }),
      });
    }
    return { ok: true, results };
  },
};
