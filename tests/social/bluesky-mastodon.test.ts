import { describe, expect, it } from "vitest";
import { bluesky, blueskyAuth, jwtExpiryMs } from "../../core/backends/social/bluesky.ts";
import { mastodon } from "../../core/backends/social/mastodon.ts";
import { answer, fixture, query } from "../backends/helpers.ts";

const BSKY = { baseUrl: "https://bsky.social", key: "quarry.bsky.social", token: "abcd-efgh-ijkl-mnop" };

/** An unsigned JWT with the given payload (the signature is never checked here). */
function jwt(payload: object): string {
  const b64 = (o: object) => btoa(JSON.stringify(o)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
  return `${b64({ alg: "ES256K", typ: "at+jwt" })}.${b64(payload)}.sig`;
}

describe("bluesky.parseResponse", () => {
  it("parses the recorded search: no hitsTotal, string cursor, links from cards and facets", () => {
    const out = bluesky.parseResponse(answer(fixture("bluesky/app.bsky.feed.searchPosts_redistricting.json")), query());
    expect(out.ok && out.results).toHaveLength(25);
    const [first, second, third] = out.ok ? out.results : [];
    expect(first).toMatchObject({
      id: "bsky:at://did:plc:kkergqgbhb56ptpwj2wenkje/app.bsky.feed.post/3lpk2u6qo222m",
      platform: "bluesky",
      kind: "post",
      url: "https://bsky.app/profile/socpaperbot.bsky.social/post/3lpk2u6qo222m",
      linked_url: "https://osf.io/v87fn", // from the link facet
      author: "socpaperbot.bsky.social",
      community: null,
      published_at: "2025-05-19T17:10:09Z", // microseconds dropped
      engagement: { comments: 0, reposts: 0, likes: 0 },
    });
    expect(first!.title.length).toBeLessThanOrEqual(100);
    expect(second).toMatchObject({
      linked_url: "https://open.substack.com/pub/christackett/p/the-pawn-or-the-collaborator?r=92vnq&utm_medium=ios", // external card
      engagement: { comments: 0, reposts: 3, likes: 4 },
    });
    expect(third).toMatchObject({ kind: "comment", author: "mcpli.bsky.social" }); // a reply
    expect(out.ok && out.results.filter((r) => r.kind === "comment")).toHaveLength(12);
  });

  it("classifies XRPC errors and rate limits", () => {
    const bad = bluesky.parseResponse(answer('{"error":"BadQueryString","message":"Error: q is required"}', 400), query());
    expect(bad.ok === false && bad.error).toMatchObject({ class: "http", message: expect.stringContaining("BadQueryString") });
    const expired = bluesky.parseResponse(answer('{"error":"ExpiredToken","message":"Token has expired"}', 400), query());
    expect(expired.ok === false && expired.error.class).toBe("http");
    const limited = bluesky.parseResponse(
      answer('{"error":"RateLimitExceeded"}', 429, { "ratelimit-reset": String(Date.parse("2026-11-22T12:05:00Z") / 1000), date: "Sun, 22 Nov 2026 12:00:00 GMT" }),
      query(),
    );
    expect(limited.ok === false && limited.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 300 });
    const junk = bluesky.parseResponse(answer('{"cursor":"25"}'), query());
    expect(junk.ok === false && junk.error.class).toBe("parse");
  });

  it("builds the search under the PDS, newest first with a freshness window", () => {
    const url = new URL(bluesky.buildRequest(query({ query: "redistricting", maxResults: 25, freshness: "day", page: 2 }), BSKY).url);
    expect(url.origin + url.pathname).toBe("https://bsky.social/xrpc/app.bsky.feed.searchPosts");
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: "redistricting", sort: "latest", limit: "25", cursor: "25" });
  });
});

describe("bluesky createSession", () => {
  it("builds the session request and reads the access JWT's expiry", async () => {
    const req = blueskyAuth.buildTokenRequest({ ...BSKY, baseUrl: "http://127.0.0.1:9000/bsky" });
    expect(req.method).toBe("POST");
    expect(req.url).toBe("http://127.0.0.1:9000/bsky/xrpc/com.atproto.server.createSession");
    expect(await req.json()).toEqual({ identifier: "quarry.bsky.social", password: "abcd-efgh-ijkl-mnop" });

    const access = jwt({ scope: "com.atproto.appPass", sub: "did:plc:x", exp: 1_800_000_000 });
    expect(jwtExpiryMs(access)).toBe(1_800_000_000_000);
    expect(jwtExpiryMs("opaque")).toBeNull();
    const body = JSON.stringify({ did: "did:plc:x", handle: "quarry.bsky.social", accessJwt: access, refreshJwt: "r" });
    expect(blueskyAuth.parseTokenResponse(answer(body))).toEqual({ ok: true, token: access, expiresAtMs: 1_800_000_000_000 });
  });

  it("reports a wrong app password as blocked and limits as rate_limited", () => {
    const wrong = blueskyAuth.parseTokenResponse(answer('{"error":"AuthenticationRequired","message":"Invalid identifier or password"}', 401));
    expect(wrong.ok === false && wrong.error).toMatchObject({ class: "blocked", message: expect.stringContaining("Invalid identifier or password") });
    const limited = blueskyAuth.parseTokenResponse(answer('{"error":"RateLimitExceeded"}', 429, { "retry-after": "120" }));
    expect(limited.ok === false && limited.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 120 });
    const odd = blueskyAuth.parseTokenResponse(answer('{"did":"x"}'));
    expect(odd.ok === false && odd.error.class).toBe("http");
  });
});

describe("mastodon.parseResponse", () => {
  it("parses the 2026 answer (collections key, quotes_count): statuses only", () => {
    const out = mastodon.parseResponse(answer(fixture("mastodon/api_v2_search_halcy_mastodon_social.json")), query());
    expect(out.ok && out.results).toHaveLength(2);
    expect(out.ok && out.results[0]).toMatchObject({
      id: "mastodon:icosahedron.website/users/greg/statuses/116388148912635764",
      platform: "mastodon",
      kind: "comment", // in_reply_to_id is set
      url: "https://icosahedron.website/@greg/116388148912635764",
      linked_url: "https://www.youtube.com/watch?v=MWCSw_cNxKc", // the preview card
      author: "greg@icosahedron.website",
      community: "icosahedron.website",
      published_at: "2026-04-11T21:16:53Z",
      engagement: { comments: 1, reposts: 0, likes: 0 },
    });
    // Mastodon's hidden URL parts (span.invisible) are dropped from the text.
    expect(out.ok && out.results[0]!.text).toMatch(/Come On My Selector youtube\.com\/watch\?v=MWCSw_cNxKc$/);
    expect(mastodon.parseResponse(answer(fixture("mastodon/api_v2_search_mastodonpy_test_local.json")), query())).toEqual({ ok: true, results: [] });
  });

  it("takes a boost's original and a content warning", () => {
    const inner = { id: "2", uri: "https://a.example/users/x/statuses/2", url: "https://a.example/@x/2", created_at: "2026-01-01T00:00:00.000Z", content: "<p>Hello <b>world</b></p>", spoiler_text: "cw", account: { acct: "x@a.example" }, favourites_count: 5, reblogs_count: 2, quotes_count: 1 };
    const boost = { ...inner, id: "3", uri: "https://b.example/users/y/statuses/3", url: null, content: "", spoiler_text: "", account: { acct: "y", url: "https://b.example/@y" }, reblog: inner };
    const out = mastodon.parseResponse(answer(JSON.stringify({ accounts: [], statuses: [boost], hashtags: [] })), query());
    expect(out.ok && out.results[0]).toMatchObject({ id: "mastodon:a.example/users/x/statuses/2", text: "cw\nHello world", kind: "post", engagement: { likes: 5, reposts: 3 } });
  });

  it("classifies failures", () => {
    const bad = mastodon.parseResponse(answer('{"error":"The access token is invalid"}', 401), query());
    expect(bad.ok === false && bad.error).toMatchObject({ class: "blocked", message: expect.stringContaining("access token is invalid") });
    const limited = mastodon.parseResponse(answer('{"error":"Too many requests"}', 429, { "x-ratelimit-reset": "2026-11-22T12:05:00.000Z", date: "Sun, 22 Nov 2026 12:00:00 GMT" }), query());
    expect(limited.ok === false && limited.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 300 });
    // A bare Status[] (e.g. a timeline) is not a search answer.
    const bare = mastodon.parseResponse(answer("[]"), query());
    expect(bare.ok === false && bare.error.class).toBe("parse");
  });

  it("builds the statuses search with the bearer token on the operator's instance", () => {
    const req = mastodon.buildRequest(query({ query: "halcy", maxResults: 80 }), { baseUrl: "https://mastodon.social", token: "tok" });
    const url = new URL(req.url);
    expect(url.origin + url.pathname).toBe("https://mastodon.social/api/v2/search");
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: "halcy", type: "statuses", limit: "40" });
    expect(req.headers.get("authorization")).toBe("Bearer tok");
  });
});
