import { describe, expect, it } from "vitest";
import { github } from "../../core/backends/social/github.ts";
import { lemmy } from "../../core/backends/social/lemmy.ts";
import { answer, fixture, query } from "../backends/helpers.ts";

const REPO = "octokit-fixture-org/tmp-scenario-search-issues-20220719044045959-jlcli";

describe("github.parseResponse", () => {
  it("parses the recorded issue search", () => {
    const out = github.parseResponse(answer(fixture("github/search_issues_sesame.json")), query());
    expect(out.ok && out.results.map((r) => r.id)).toEqual([`gh:${REPO}#2`, `gh:${REPO}#1`]);
    expect(out.ok && out.results[0]).toEqual({
      id: `gh:${REPO}#2`,
      platform: "github",
      kind: "issue",
      title: "Sesame seeds split without a pop!",
      snippet: "I’ve waited all year long, but there was no pop 😭",
      text: "I’ve waited all year long, but there was no pop 😭",
      url: `https://github.com/${REPO}/issues/2`,
      linked_url: null,
      author: "octokit-fixture-user-b",
      community: REPO,
      published_at: "2022-07-19T04:40:52Z",
      engagement: { comments: 0, reactions: 0 },
    });
  });

  it("types discussions and pull requests by their page", () => {
    const body = JSON.stringify({
      total_count: 2,
      items: [
        { html_url: "https://github.com/o/r/discussions/7", number: 7, title: "Idea", body: "**Bold** [link](https://x.y)", comments: 3, created_at: "2024-01-02T03:04:05Z" },
        { html_url: "https://github.com/o/r/pull/8", number: 8, title: "Fix", body: null, user: null },
      ],
    });
    const out = github.parseResponse(answer(body), query());
    expect(out.ok && out.results.map((r) => [r.id, r.kind, r.text])).toEqual([["gh:o/r#7", "discussion", "Bold link"], ["gh:o/r#8", "issue", ""]]);
  });

  it("reads primary and secondary rate limits", () => {
    const primary = github.parseResponse(
      answer('{"message":"API rate limit exceeded for 1.2.3.4."}', 403, {
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": String(Date.parse("2026-11-22T12:00:40Z") / 1000),
        date: "Sun, 22 Nov 2026 12:00:00 GMT",
      }),
      query(),
    );
    expect(primary.ok === false && primary.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 40, message: expect.stringContaining("API rate limit exceeded") });
    const secondary = github.parseResponse(answer('{"message":"You have exceeded a secondary rate limit."}', 403, { "retry-after": "60" }), query());
    expect(secondary.ok === false && secondary.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 60, message: expect.stringContaining("secondary") });
    const tooMany = github.parseResponse(answer('{"message":"slow down"}', 429, { "retry-after": "5" }), query());
    expect(tooMany.ok === false && tooMany.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 5 });
  });

  it("reports a bad token as blocked and a bad query as http", () => {
    const bad = github.parseResponse(answer('{"message":"Bad credentials"}', 401), query());
    expect(bad.ok === false && bad.error).toMatchObject({ class: "blocked", message: expect.stringContaining("Bad credentials") });
    const invalid = github.parseResponse(answer('{"message":"Validation Failed"}', 422), query());
    expect(invalid.ok === false && invalid.error.class).toBe("http");
    const junk = github.parseResponse(answer('{"items":{}}'), query());
    expect(junk.ok === false && junk.error.class).toBe("parse");
  });
});

describe("github.buildRequest", () => {
  it("sends the token only when configured, and the documented headers", () => {
    const anon = github.buildRequest(query({ query: "sesame", maxResults: 30 }), { baseUrl: "https://api.github.com" });
    const url = new URL(anon.url);
    expect(url.origin + url.pathname).toBe("https://api.github.com/search/issues");
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: "sesame", per_page: "30" });
    expect(anon.headers.get("authorization")).toBeNull();
    expect(anon.headers.get("accept")).toBe("application/vnd.github+json");
    const signed = github.buildRequest(query({ freshness: "month" }), { baseUrl: "http://127.0.0.1:1/gh", token: "ghp_x" });
    expect(signed.headers.get("authorization")).toBe("Bearer ghp_x");
    expect(signed.url).toMatch(/^http:\/\/127\.0\.0\.1:1\/gh\/search\/issues\?.*sort=created&order=desc/);
  });
});

describe("lemmy (SYNTHETIC sample from the documented schema)", () => {
  it("parses posts: ap_id as identity, link posts, markdown bodies, qualified names", () => {
    const out = lemmy.parseResponse(answer(fixture("lemmy/api_v3_search_posts_synthetic.json")), query());
    expect(out.ok && out.results).toEqual([
      {
        id: "lemmy:programming.dev/post/11842215",
        platform: "lemmy",
        kind: "post",
        title: "Async Rust in 2024: what changed",
        snippet: "Async Rust in 2024: what changed",
        text: "",
        url: "https://programming.dev/post/11842215",
        linked_url: "https://blog.rust-lang.org/2024/03/21/async-update.html",
        author: "ferris@programming.dev",
        community: "rust@programming.dev",
        published_at: "2024-03-22T09:15:42Z",
        engagement: { score: 187, comments: 42 },
      },
      expect.objectContaining({
        id: "lemmy:lemmy.world/post/13650377",
        linked_url: null,
        text: "Starting a new service and wondering whether tokio is still the obvious choice, or whether smol / async-std are worth a look. See the book.",
        community: "rust@lemmy.ml",
      }),
    ]);
  });

  it("answers rate limits (429, or rate_limit_error) and other errors", () => {
    const limited = lemmy.parseResponse(answer('{"error":"rate_limit_error"}', 400), query());
    expect(limited.ok === false && limited.error.class).toBe("rate_limited");
    const tooMany = lemmy.parseResponse(answer("", 429, { "retry-after": "3" }), query());
    expect(tooMany.ok === false && tooMany.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 3 });
    const other = lemmy.parseResponse(answer('{"error":"couldnt_find_object"}', 404), query());
    expect(other.ok === false && other.error).toMatchObject({ class: "http", message: expect.stringContaining("couldnt_find_object") });
    const junk = lemmy.parseResponse(answer('{"type_":"Posts"}'), query());
    expect(junk.ok === false && junk.error.class).toBe("parse");
  });

  it("builds the search request with Lemmy's relative sorts for freshness", () => {
    const url = new URL(lemmy.buildRequest(query({ query: "rust async", maxResults: 20 }), { baseUrl: "https://lemmy.world" }).url);
    expect(url.origin + url.pathname).toBe("https://lemmy.world/api/v3/search");
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: "rust async", type_: "Posts", sort: "TopAll", listing_type: "All", limit: "20" });
    const week = new URL(lemmy.buildRequest(query({ freshness: "week" }), { baseUrl: "https://lemmy.ml" }).url);
    expect(week.searchParams.get("sort")).toBe("TopWeek");
  });
});
