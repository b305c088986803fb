/**
 * Lemmy's search API (`GET /api/v3/search?type_=Posts`), by default on lemmy.world, which
 * federates most communities. https://join-lemmy.org/api/classes/LemmyHttp.html#search
 * A post is identified by its `ap_id` (its canonical URL on the origin instance), so the same
 * post seen through two instances keeps one id. Freshness maps to Lemmy's own relative sorts
 * (TopDay … TopYear). Timestamps carry microseconds; before 0.19 they had no zone (UTC).
 * Rate limiting answers 429, or 400 with `{"error":"rate_limit_error"}` on some versions.
 */
import * as v from "valibot";
import type { Freshness, ParseOutcome } from "../types.ts";
import { httpFailure, parseFailure, parseJson, retryAfterFromHeaders, toIsoUtc, upstreamUrl } from "../upstream.ts";
import { compact, count, markdownToText, snippetOf, webUrlOrNull } from "./text.ts";
import type { SocialBackend, SocialItem } from "./types.ts";

const SORT: Record<Freshness, string> = { day: "TopDay", week: "TopWeek", month: "TopMonth", year: "TopYear" };

const PostView = v.object({
  post: v.object({
    id: v.number(),
    name: v.string(),
    url: v.nullish(v.string()),
    body: v.nullish(v.string()),
    published: v.string(),
    ap_id: v.string(),
    nsfw: v.optional(v.boolean()),
    deleted: v.optional(v.boolean()),
    removed: v.optional(v.boolean()),
  }),
  creator: v.object({ name: v.string(), actor_id: v.optional(v.string()) }),
  community: v.object({ name: v.string(), actor_id: v.optional(v.string()) }),
  counts: v.optional(v.object({ score: v.optional(v.number()), comments: v.optional(v.number()) })),
});

const Answer = v.object({ posts: v.array(v.unknown()) });
const ErrorBody = v.object({ error: v.string() });

/** `https://lemmy.ml/c/rust` → `rust@lemmy.ml`, the name users type. */
function qualified(name: string, actorId: string | undefined): string {
  const host = actorId && URL.canParse(actorId) ? new URL(actorId).hostname : null;
  return host ? `${name}@${host}` : name;
}

export const lemmy: SocialBackend = {
  about: {
    id: "lemmy",
    kind: "social",
    defaultBaseUrl: "https://lemmy.world",
    docs: "https://join-lemmy.org/api/classes/LemmyHttp.html#search",
  },

  buildRequest(query, cfg) {
    const url = upstreamUrl(cfg.baseUrl, "/api/v3/search", {
      q: query.query,
      type_: "Posts",
      sort: query.freshness ? SORT[query.freshness] : "TopAll",
      listing_type: "All",
      limit: Math.min(Math.max(query.maxResults, 1), 50),
      page: query.page && query.page > 1 ? query.page : undefined,
    });
    return new Request(url, { headers: { accept: "application/json" } });
  },

  parseResponse(res, query): ParseOutcome<SocialItem> {
    const json = parseJson(res.body);
    if (res.status < 200 || res.status > 299) {
      const body = json.ok ? v.safeParse(ErrorBody, json.value) : null;
      const code = body?.success ? body.output.error : null;
      if (code === "rate_limit_error" || res.status === 429) {
        const retry = retryAfterFromHeaders(res.headers);
        return { ok: false, error: { class: "rate_limited", message: "Lemmy rate limit reached", ...(retry === undefined ? {} : { retryAfterSeconds: retry }) } };
      }
      const failure = httpFailure(res, "Lemmy");
      if (code) failure.message += `: ${code}`;
      return { ok: false, error: failure };
    }
    if (!json.ok) return { ok: false, error: parseFailure("Lemmy", "body is not JSON") };
    const answer = v.safeParse(Answer, json.value);
    if (!answer.success) return { ok: false, error: parseFailure("Lemmy", "no posts array") };
    const results: SocialItem[] = [];
    for (const raw of answer.output.posts) {
      if (results.length >= query.maxResults) break;
      const parsed = v.safeParse(PostView, raw);
      if (!parsed.success) continue;
      const { post, creator, community, counts } = parsed.output;
      if (post.nsfw || post.deleted || post.removed || !webUrlOrNull(post.ap_id)) continue;
      const text = markdownToText(post.body ?? "");
      results.push({
        id: `lemmy:${post.ap_id.replace(/^https?:\/\//, "")}`,
        platform: "lemmy",
        kind: "post",
        title: post.name.trim(),
        snippet: snippetOf(text || post.name),
        text,
        url: post.ap_id,
        linked_url: webUrlOrNull(post.url),
        author: qualified(creator.name, creator.actor_id),
        community: qualified(community.name, community.actor_id),
        published_at: toIsoUtc(post.published),
        engagement: compact({ score: counts?.score, comments: count(counts?.comments) }),
      });
    }
    return { ok: true, results };
  },
};
