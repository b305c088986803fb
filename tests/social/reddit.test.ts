import { describe, expect, it } from "vitest";
import { reddit, redditAuth } from "../../core/backends/social/reddit.ts";
import { AUTH_FAILURE_HEADER } from "../../core/backends/social/auth.ts";
import { answer, fixture, query } from "../backends/helpers.ts";

const DEFAULT = { baseUrl: "https://oauth.reddit.com", key: "client-id", token: "client-secret" };

describe("reddit.parseResponse", () => {
  it("parses the recorded post search listing (t3 children)", () => {
    const out = reddit.parseResponse(answer(fixture("reddit/oauth_r_all_search_praw_oauth_search.json")), query());
    expect(out.ok && out.results.map((r) => r.id)).toEqual(["reddit:t3_3gpbiu", "reddit:t3_3x4kt2", "reddit:t3_3b4erh", "reddit:t3_1qvzkd", "reddit:t3_3qc02b", "reddit:t3_4at068"]);
    const first = out.ok ? out.results[0]! : null;
    expect(first).toMatchObject({
      platform: "reddit",
      kind: "post",
      title: "[PRAW][OAuth2Util] Problem using get_banned() : raise Forbidden(_raw=response)",
      url: "https://www.reddit.com/r/redditdev/comments/3gpbiu/prawoauth2util_problem_using_get_banned_raise/",
      linked_url: null, // a self post links nowhere else
      author: "dClauzel",
      community: "r/redditdev",
      published_at: "2015-08-12T09:08:34Z",
      engagement: { score: 0, comments: 21 },
    });
    expect(first!.text.startsWith("solved\nProblem solved with this:")).toBe(true);
    expect(out.ok && out.results[5]!.url).toContain("/r/p18s/comments/4at068/");
  });

  it("skips what is not a post (the subreddit search answers t5 children)", () => {
    expect(reddit.parseResponse(answer(fixture("reddit/oauth_subreddits_search_praw.json")), query())).toEqual({ ok: true, results: [] });
  });

  it("keeps a link post's outside URL and drops NSFW posts", () => {
    const post = (over: Record<string, unknown>) => ({ kind: "t3", data: { name: "t3_a", title: "T", permalink: "/r/x/comments/a/t/", subreddit: "x", created_utc: 1700000000.0, url: "https://example.com/post?utm_source=r", is_self: false, ...over } });
    const body = JSON.stringify({ kind: "Listing", data: { children: [post({}), post({ name: "t3_b", over_18: true })] } });
    const out = reddit.parseResponse(answer(body), query());
    expect(out.ok && out.results.map((r) => [r.id, r.linked_url])).toEqual([["reddit:t3_a", "https://example.com/post?utm_source=r"]]);
  });

  it("classifies failures, including a sign-in that failed before the search", () => {
    const limited = reddit.parseResponse(answer("", 429, { "x-ratelimit-reset": "42" }), query());
    expect(limited.ok === false && limited.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 42 });
    const expired = reddit.parseResponse(answer('{"message": "Unauthorized", "error": 401}', 401), query());
    expect(expired.ok === false && expired.error.class).toBe("blocked");
    const signIn = reddit.parseResponse(answer("token endpoint answered HTTP 401 (Unauthorized)", 401, { [AUTH_FAILURE_HEADER]: "blocked" }), query());
    expect(signIn.ok === false && signIn.error).toEqual({ class: "blocked", message: "Reddit sign-in failed: token endpoint answered HTTP 401 (Unauthorized)" });
    const junk = reddit.parseResponse(answer('{"kind":"t3"}'), query());
    expect(junk.ok === false && junk.error.class).toBe("parse");
  });
});

describe("reddit.buildRequest", () => {
  it("searches with raw_json=1 and a descriptive User-Agent; the token is added later by withPlatformAuth", () => {
    const req = reddit.buildRequest(query({ query: "praw oauth", maxResults: 25, freshness: "month" }), DEFAULT);
    const url = new URL(req.url);
    expect(url.origin + url.pathname).toBe("https://oauth.reddit.com/search");
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: "praw oauth", type: "link", sort: "relevance", t: "month", limit: "25", raw_json: "1" });
    expect(req.headers.get("user-agent")).toMatch(/quarry/);
    expect(req.headers.get("authorization")).toBeNull();
  });

  it("sends a configured bearer token as is when no client id is given", () => {
    const req = reddit.buildRequest(query(), { baseUrl: "https://oauth.reddit.com", token: "app-only-token" });
    expect(req.headers.get("authorization")).toBe("Bearer app-only-token");
  });
});

describe("reddit client-credentials exchange", () => {
  it("posts the grant with Basic auth to www.reddit.com, or to the rebased base URL", async () => {
    const req = redditAuth.buildTokenRequest(DEFAULT);
    expect(req.method).toBe("POST");
    expect(req.url).toBe("https://www.reddit.com/api/v1/access_token");
    expect(req.headers.get("authorization")).toBe(`Basic ${btoa("client-id:client-secret")}`);
    expect(await req.text()).toBe("grant_type=client_credentials");
    expect(redditAuth.buildTokenRequest({ ...DEFAULT, baseUrl: "http://127.0.0.1:9000/reddit" }).url).toBe("http://127.0.0.1:9000/reddit/api/v1/access_token");
    expect(redditAuth.applies(DEFAULT)).toBe(true);
    expect(redditAuth.applies({ baseUrl: DEFAULT.baseUrl, token: "t" })).toBe(false);
  });

  it("parses tokens and refusals (documented shapes)", () => {
    expect(redditAuth.parseTokenResponse(answer('{"access_token":"abc","token_type":"bearer","expires_in":86400,"scope":"*"}'))).toEqual({ ok: true, token: "abc", expiresInSeconds: 86400 });
    const wrong = redditAuth.parseTokenResponse(answer('{"message": "Unauthorized", "error": 401}', 401));
    expect(wrong.ok === false && wrong.error).toMatchObject({ class: "blocked", message: expect.stringContaining("Unauthorized") });
    const grant = redditAuth.parseTokenResponse(answer('{"error": "unsupported_grant_type"}'));
    expect(grant.ok === false && grant.error.class).toBe("blocked");
    const busy = redditAuth.parseTokenResponse(answer("", 429, { "retry-after": "7" }));
    expect(busy.ok === false && busy.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 7 });
    const down = redditAuth.parseTokenResponse(answer("<html>", 503));
    expect(down.ok === false && down.error.class).toBe("http");
  });
});
