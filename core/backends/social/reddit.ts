/**
 * Reddit search through the OAuth API (`GET https://oauth.reddit.com/search`, `raw_json=1` so
 * text is not HTML-escaped). https://www.reddit.com/dev/api#GET_search
 * Credentials (Reddit allows no anonymous API use):
 * - `QUARRY_REDDIT_KEY` = the app's client id and `QUARRY_REDDIT_TOKEN` = its client secret:
 *   an app-only token is fetched by the client-credentials grant and cached until it expires
 *   (https://github.com/reddit-archive/reddit/wiki/OAuth2#application-only-oauth);
 * - `QUARRY_REDDIT_TOKEN` alone = a bearer token obtained elsewhere, sent as is.
 * Without a token the backend is disabled. With the default base URL the token endpoint is on
 * www.reddit.com; a configured base URL (a mirror, a replay server) serves both paths.
 * Rate limits: 429 with `x-ratelimit-reset` (seconds until the window resets).
 */
import * as v from "valibot";
import type { BackendConfig, ParseOutcome, UpstreamResponse } from "../types.ts";
import { httpFailure, parseFailure, parseJson, retryAfterFromHeaders, upstreamUrl } from "../upstream.ts";
import { signInFailure, type TokenExchange, type TokenOutcome } from "./auth.ts";
import { compact, count, isoFromEpochSeconds, markdownToText, snippetOf, webUrlOrNull } from "./text.ts";
import type { Freshness } from "../types.ts";
import type { SocialBackend, SocialItem } from "./types.ts";

const DEFAULT_BASE = "https://oauth.reddit.com";
/** Reddit asks every client for a unique, descriptive User-Agent. */
const USER_AGENT = "web:quarry-social-research:v0.1 (self-hosted search API)";
const TIME: Record<Freshness, string> = { day: "day", week: "week", month: "month", year: "year" };

const Post = v.object({
  name: v.string(),
  title: v.string(),
  permalink: v.string(),
  url: v.nullish(v.string()),
  is_self: v.optional(v.boolean()),
  selftext: v.nullish(v.string()),
  author: v.nullish(v.string()),
  subreddit: v.string(),
  created_utc: v.number(),
  score: v.optional(v.number()),
  num_comments: v.optional(v.number()),
  over_18: v.nullish(v.boolean()),
});

const Listing = v.object({
  kind: v.literal("Listing"),
  data: v.object({ children: v.array(v.object({ kind: v.string(), data: v.unknown() })) }),
});

const TokenBody = v.object({ access_token: v.string(), expires_in: v.optional(v.number()) });
const TokenError = v.object({ error: v.union([v.string(), v.number()]), message: v.optional(v.string()) });

/** The discussion URL: permalink on www.reddit.com, without the `?ref=search_posts` tail. */
function discussionUrl(permalink: string): string {
  return `https://www.reddit.com${permalink.split("?")[0]}`;
}

export const reddit: SocialBackend = {
  about: {
    id: "reddit",
    kind: "social",
    defaultBaseUrl: DEFAULT_BASE,
    needs: ["token"],
    docs: "https://www.reddit.com/dev/api#GET_search",
  },

  buildRequest(query, cfg) {
    const url = upstreamUrl(cfg.baseUrl, "/search", {
      q: query.query,
      type: "link",
      sort: "relevance",
      t: query.freshness ? TIME[query.freshness] : "all",
      limit: Math.min(Math.max(query.maxResults, 1), 100),
      raw_json: 1,
    });
    const headers: Record<string, string> = { accept: "application/json", "user-agent": USER_AGENT };
    // Client id + secret: withPlatformAuth adds the app-only token. A token alone is used as is.
    if (!cfg.key && cfg.token) headers.authorization = `Bearer ${cfg.token}`;
    return new Request(url, { headers });
  },

  parseResponse(res, query): ParseOutcome<SocialItem> {
    const signIn = signInFailure(res, "Reddit");
    if (signIn) return { ok: false, error: signIn };
    if (res.status < 200 || res.status > 299) {
      const failure = httpFailure(res, "Reddit");
      if (failure.class === "rate_limited" && failure.retryAfterSeconds === undefined) {
        const reset = Number(res.headers.get("x-ratelimit-reset"));
        if (Number.isFinite(reset) && reset >= 0) failure.retryAfterSeconds = Math.ceil(reset);
      }
      return { ok: false, error: failure };
    }
    const json = parseJson(res.body);
    if (!json.ok) return { ok: false, error: parseFailure("Reddit", "body is not JSON") };
    const listing = v.safeParse(Listing, json.value);
    if (!listing.success) return { ok: false, error: parseFailure("Reddit", "not a Listing") };
    const results: SocialItem[] = [];
    for (const child of listing.output.data.children) {
      if (results.length >= query.maxResults) break;
      if (child.kind !== "t3") continue; // subreddits (t5), comments (t1) and others are not posts
      const parsed = v.safeParse(Post, child.data);
      if (!parsed.success || parsed.output.over_18) continue;
      const p = parsed.output;
      const url = discussionUrl(p.permalink);
      const text = markdownToText(p.selftext ?? "");
      const linked = p.is_self ? null : webUrlOrNull(p.url);
      results.push({
        id: `reddit:${p.name}`,
        platform: "reddit",
        kind: "post",
        title: p.title.trim(),
        snippet: snippetOf(text || p.title),
        text,
        url,
        linked_url: linked && linked.split("?")[0] !== url ? linked : null,
        author: p.author && p.author !== "[deleted]" ? p.author : null,
        community: `r/${p.subreddit}`,
        published_at: isoFromEpochSeconds(p.created_utc),
        engagement: compact({ score: p.score, comments: count(p.num_comments) }),
      });
    }
    return { ok: true, results };
  },
};

/* ---- app-only OAuth: client credentials grant ---- */

export function redditTokenUrl(cfg: BackendConfig): URL {
  return cfg.baseUrl === DEFAULT_BASE
    ? new URL("https://www.reddit.com/api/v1/access_token")
    : upstreamUrl(cfg.baseUrl, "/api/v1/access_token", {});
}

export const redditAuth: TokenExchange = {
  id: "reddit",
  paths: ["/search"],
  applies: (cfg) => Boolean(cfg.key && cfg.token),

  buildTokenRequest(cfg) {
    return new Request(redditTokenUrl(cfg), {
      method: "POST",
      headers: {
        authorization: `Basic ${btoa(`${cfg.key ?? ""}:${cfg.token ?? ""}`)}`,
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
        "user-agent": USER_AGENT,
      },
      body: "grant_type=client_credentials",
    });
  },

  parseTokenResponse(res): TokenOutcome {
    const json = parseJson(res.body);
    const ok = json.ok && res.status === 200 ? v.safeParse(TokenBody, json.value) : null;
    if (ok?.success) return { ok: true, token: ok.output.access_token, ...(ok.output.expires_in ? { expiresInSeconds: ok.output.expires_in } : {}) };
    const err = json.ok ? v.safeParse(TokenError, json.value) : null;
    const detail = err?.success ? ` (${err.output.message ?? err.output.error})` : "";
    if (res.status === 429) {
      const retry = retryAfterFromHeaders(res.headers);
      return { ok: false, error: { class: "rate_limited", message: `token endpoint answered 429${detail}`, ...(retry === undefined ? {} : { retryAfterSeconds: retry }) } };
    }
    // Wrong id or secret answers 401; a grant the app may not use answers 200 {"error": "unsupported_grant_type"}.
    const refused = res.status === 401 || res.status === 403 || (res.status === 200 && err?.success);
    return { ok: false, error: { class: refused ? "blocked" : "http", message: `token endpoint answered HTTP ${res.status}${detail}` } };
  },
};
