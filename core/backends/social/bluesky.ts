/**
 * Bluesky post search (`app.bsky.feed.searchPosts`) through the account's PDS, which proxies
 * to the AppView. https://docs.bsky.app/docs/api/app-bsky-feed-search-posts
 * Credentials: `QUARRY_BLUESKY_KEY` = handle (or DID), `QUARRY_BLUESKY_TOKEN` = an app password
 * (Settings → App passwords). A session comes from `com.atproto.server.createSession`
 * (https://docs.bsky.app/docs/api/com-atproto-server-create-session) and is cached until the
 * access JWT's `exp`. Shapes: `hitsTotal` may be absent, `cursor` is a string offset, fewer
 * posts than `limit` can come back. Rate limits: 429 with `ratelimit-reset` (epoch seconds).
 */
import * as v from "valibot";
import type { ParseOutcome, UpstreamResponse } from "../types.ts";
import { httpFailure, parseFailure, parseJson, toIsoUtc, upstreamUrl } from "../upstream.ts";
import { signInFailure, type TokenExchange, type TokenOutcome } from "./auth.ts";
import { compact, count, snippetOf, titleFrom, webUrlOrNull } from "./text.ts";
import type { SocialBackend, SocialItem } from "./types.ts";

const SEARCH_PATH = "/xrpc/app.bsky.feed.searchPosts";
const SESSION_PATH = "/xrpc/com.atproto.server.createSession";

const External = v.object({ external: v.object({ uri: v.string() }) });
const LinkFacet = v.object({ features: v.array(v.object({ $type: v.optional(v.string()), uri: v.optional(v.string()) })) });

const PostView = v.object({
  uri: v.string(),
  author: v.object({ did: v.string(), handle: v.string(), displayName: v.optional(v.string()) }),
  record: v.object({
    text: v.optional(v.string(), ""),
    createdAt: v.optional(v.string()),
    reply: v.optional(v.unknown()),
    embed: v.optional(v.unknown()),
    facets: v.optional(v.array(v.unknown()), []),
  }),
  embed: v.optional(v.unknown()),
  replyCount: v.optional(v.number()),
  repostCount: v.optional(v.number()),
  likeCount: v.optional(v.number()),
  quoteCount: v.optional(v.number()),
  indexedAt: v.optional(v.string()),
});

const Answer = v.object({ posts: v.array(v.unknown()), cursor: v.optional(v.string()), hitsTotal: v.optional(v.number()) });
const XrpcError = v.object({ error: v.optional(v.string()), message: v.optional(v.string()) });
const Session = v.object({ accessJwt: v.string() });

/** The link a post shares: its external card (view or record), else its first link facet. */
function linkOf(post: v.InferOutput<typeof PostView>): string | null {
  for (const embed of [post.embed, post.record.embed]) {
    const ext = v.safeParse(External, embed);
    if (ext.success) return webUrlOrNull(ext.output.external.uri);
  }
  for (const facet of post.record.facets) {
    const parsed = v.safeParse(LinkFacet, facet);
    const uri = parsed.success ? parsed.output.features.find((f) => f.$type === "app.bsky.richtext.facet#link")?.uri : undefined;
    if (uri) return webUrlOrNull(uri);
  }
  return null;
}

/** `at://did/app.bsky.feed.post/rkey` → the post's page on bsky.app. */
function postPage(uri: string, handle: string): string | null {
  const m = /^at:\/\/([^/]+)\/app\.bsky\.feed\.post\/([^/?#]+)$/.exec(uri);
  return m ? `https://bsky.app/profile/${handle || m[1]}/post/${m[2]}` : null;
}

function xrpcFailure(res: UpstreamResponse) {
  const failure = httpFailure(res, "Bluesky");
  const json = parseJson(res.body);
  const body = json.ok ? v.safeParse(XrpcError, json.value) : null;
  if (body?.success) failure.message += `: ${[body.output.error, body.output.message].filter(Boolean).join(" ")}`;
  if (failure.class === "rate_limited" && failure.retryAfterSeconds === undefined) {
    const reset = Number(res.headers.get("ratelimit-reset"));
    const now = Date.parse(res.headers.get("date") ?? "");
    if (Number.isFinite(reset) && !Number.isNaN(now)) failure.retryAfterSeconds = Math.max(0, Math.ceil(reset - now / 1000));
  }
  return failure;
}

export const bluesky: SocialBackend = {
  about: {
    id: "bluesky",
    kind: "social",
    defaultBaseUrl: "https://bsky.social",
    needs: ["key", "token"],
    docs: "https://docs.bsky.app/docs/api/app-bsky-feed-search-posts",
  },

  buildRequest(query, cfg) {
    const url = upstreamUrl(cfg.baseUrl, SEARCH_PATH, {
      q: query.query,
      sort: query.freshness ? "latest" : "top",
      limit: Math.min(Math.max(query.maxResults, 1), 100),
      cursor: query.page && query.page > 1 ? String((query.page - 1) * Math.min(Math.max(query.maxResults, 1), 100)) : undefined,
    });
    return new Request(url, { headers: { accept: "application/json" } }); // withPlatformAuth signs it
  },

  parseResponse(res, query): ParseOutcome<SocialItem> {
    const signIn = signInFailure(res, "Bluesky");
    if (signIn) return { ok: false, error: signIn };
    if (res.status < 200 || res.status > 299) return { ok: false, error: xrpcFailure(res) };
    const json = parseJson(res.body);
    if (!json.ok) return { ok: false, error: parseFailure("Bluesky", "body is not JSON") };
    const answer = v.safeParse(Answer, json.value);
    if (!answer.success) return { ok: false, error: parseFailure("Bluesky", "no posts array") };
    const results: SocialItem[] = [];
    for (const raw of answer.output.posts) {
      if (results.length >= query.maxResults) break;
      const parsed = v.safeParse(PostView, raw);
      if (!parsed.success) continue;
      const post = parsed.output;
      const url = postPage(post.uri, post.author.handle);
      if (!url) continue;
      const text = post.record.text.trim();
      results.push({
        id: `bsky:${post.uri}`,
        platform: "bluesky",
        kind: post.record.reply ? "comment" : "post",
        title: titleFrom(text),
        snippet: snippetOf(text),
        text,
        url,
        linked_url: linkOf(post),
        author: post.author.handle,
        community: null,
        published_at: toIsoUtc(post.record.createdAt) ?? toIsoUtc(post.indexedAt),
        engagement: compact({
          comments: count(post.replyCount),
          reposts: post.repostCount === undefined && post.quoteCount === undefined ? undefined : (count(post.repostCount) ?? 0) + (count(post.quoteCount) ?? 0),
          likes: count(post.likeCount),
        }),
      });
    }
    return { ok: true, results };
  },
};

/* ---- session: handle + app password → access JWT ---- */

/** The `exp` claim of a JWT, in ms; null when it cannot be read (the token stays opaque otherwise). */
export function jwtExpiryMs(jwt: string): number | null {
  const payload = jwt.split(".")[1];
  if (!payload) return null;
  try {
    const json: unknown = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/")));
    const exp = typeof json === "object" && json !== null && "exp" in json ? json.exp : null;
    return typeof exp === "number" && Number.isFinite(exp) ? exp * 1000 : null;
  } catch {
    return null;
  }
}

export const blueskyAuth: TokenExchange = {
  id: "bluesky",
  paths: [SEARCH_PATH],
  applies: (cfg) => Boolean(cfg.key && cfg.token),

  buildTokenRequest(cfg) {
    return new Request(upstreamUrl(cfg.baseUrl, SESSION_PATH, {}), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ identifier: cfg.key ?? "", password: cfg.token ?? "" }),
    });
  },

  // XRPC answers an expired or revoked access token with 400 ExpiredToken / InvalidToken.
  async rejectsToken(res) {
    if (res.status === 401) return true;
    if (res.status !== 400) return false;
    const body = parseJson(await res.text());
    const error = body.ok ? v.safeParse(XrpcError, body.value) : null;
    return error?.success === true && (error.output.error === "ExpiredToken" || error.output.error === "InvalidToken");
  },

  parseTokenResponse(res): TokenOutcome {
    const json = parseJson(res.body);
    const session = json.ok && res.status === 200 ? v.safeParse(Session, json.value) : null;
    if (session?.success) {
      const expiry = jwtExpiryMs(session.output.accessJwt);
      return { ok: true, token: session.output.accessJwt, ...(expiry ? { expiresAtMs: expiry } : {}) };
    }
    const failure = xrpcFailure(res.status === 200 ? { ...res, status: 502 } : res);
    return { ok: false, error: { ...failure, message: failure.message.replace(/^Bluesky/, "createSession") } };
  },
};
