import { describe, expect, it } from "vitest";
import { brave, dateFromAge } from "../../core/backends/brave.ts";
import { answer, fixture, query } from "./helpers.ts";

const cfg = { baseUrl: "https://api.search.brave.com", key: "BSA-test-key" };

describe("brave.parseResponse", () => {
  it("parses the recorded answer: web results only, page_age as the date", () => {
    expect(brave.parseResponse(answer(fixture("brave/web_search_blue_tack_minimal.json")), query())).toEqual({
      ok: true,
      results: [
        {
          title: "Blu Tack - Wikipedia",
          url: "https://en.wikipedia.org/wiki/Blu_Tack",
          content:
            "Blu Tack is a reusable putty-like pressure-sensitive adhesive produced by Bostik, commonly used to attach " +
            "lightweight objects (such as posters or sheets of paper) to walls, doors or other dry surfaces. Traditionally blue, it is also available in other colours.",
          published_at: "2023-11-23T09:26:19Z",
          rank: 1,
          favicon: expect.stringMatching(/^https:\/\/imgs\.search\.brave\.com\//),
        },
      ],
    });
  });

  it("parses a news answer (synthetic, from the documented shape): thumbnails, icons, page_age, undated items kept undated", () => {
    const outcome = brave.parseResponse(answer(fixture("brave/news_search_synthetic.json")), query({ topic: "news" }));
    expect(outcome.ok).toBe(true);
    const results = outcome.ok ? outcome.results : [];
    expect(results.map((r) => r.published_at)).toEqual(["2024-05-02T08:15:00Z", "2024-04-26T17:40:12Z", "2019-03-03T10:00:00Z", "2024-06-12T00:00:00Z", null]);
    expect(results[0]).toMatchObject({ title: "Adhesive putty maker reports record Blue Tack sales", image: expect.stringContaining("putty-sales.jpg"), favicon: expect.stringContaining("news.example.com") });
    expect(results[2]!.image).toBeUndefined();
    // A news answer where web results were expected (and the reverse) is not silently empty.
    expect(brave.parseResponse(answer(fixture("brave/news_search_synthetic.json")), query()).ok).toBe(false);
    expect(brave.parseResponse(answer(fixture("brave/web_search_blue_tack_minimal.json")), query({ topic: "news" })).ok).toBe(false);
  });

  it("answers a search without web results with zero results", () => {
    expect(brave.parseResponse(answer('{"type":"search","query":{"original":"x"}}'), query())).toEqual({ ok: true, results: [] });
  });

  it("turns malformed bodies into parse errors", () => {
    for (const body of ["", "<html>", "[]", '{"type":"ErrorResponse"}', '{"type":"search","web":{"results":"nope"}}']) {
      const outcome = brave.parseResponse(answer(body), query());
      expect(outcome.ok === false && outcome.error.class, body).toBe("parse");
    }
  });

  it("honours Retry-After, or else X-RateLimit-Reset, on 429", () => {
    const withRetry = brave.parseResponse(answer("", 429, { "retry-after": "12" }), query());
    expect(withRetry.ok === false && withRetry.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 12 });
    const withReset = brave.parseResponse(answer("", 429, { "x-ratelimit-reset": "1, 1419704" }), query());
    expect(withReset.ok === false && withReset.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 1 });
  });

  it("reports a bad key as blocked, naming Brave's error code", () => {
    const body = JSON.stringify({ type: "ErrorResponse", error: { code: "SUBSCRIPTION_TOKEN_INVALID", detail: "The provided subscription token is invalid.", status: 401 } });
    const outcome = brave.parseResponse(answer(body, 401), query());
    expect(outcome.ok === false && outcome.error).toMatchObject({ class: "blocked", message: expect.stringContaining("SUBSCRIPTION_TOKEN_INVALID") });
  });

  it("reports 5xx as http", () => {
    const outcome = brave.parseResponse(answer("upstream connect error", 502), query());
    expect(outcome.ok === false && outcome.error.class).toBe("http");
  });
});

describe("dateFromAge (Brave's display age when page_age is missing)", () => {
  const served = new Headers({ date: "Tue, 10 Mar 2026 12:00:00 GMT" });
  it.each([
    ["March 3, 2019", "2019-03-03T00:00:00Z"],
    ["December 2, 2015", "2015-12-02T00:00:00Z"],
    ["5 hours ago", "2026-03-10T07:00:00Z"],
    ["1 day ago", "2026-03-09T12:00:00Z"],
    ["2 days ago", "2026-03-08T12:00:00Z"],
    ["1 month ago", null],
    ["February 30, 2020", null],
    ["Smarch 3, 2019", null],
    ["", null],
  ])("%s → %s", (age, iso) => {
    expect(dateFromAge(age, served)).toBe(iso);
  });
  it("a relative age without the answer's Date header gives no date", () => {
    expect(dateFromAge("2 days ago", new Headers())).toBeNull();
  });
});

describe("brave.buildRequest", () => {
  it("sends the key in X-Subscription-Token and the documented parameters", () => {
    const req = brave.buildRequest(query({ query: "blue tack", maxResults: 50, language: "en-US", freshness: "week", page: 2 }), cfg);
    const url = new URL(req.url);
    expect(url.origin + url.pathname).toBe("https://api.search.brave.com/res/v1/web/search");
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: "blue tack", count: "20", offset: "1", search_lang: "en", country: "us", freshness: "pw" });
    expect(req.headers.get("x-subscription-token")).toBe("BSA-test-key");
    expect(req.url).not.toContain("BSA-test-key");
  });

  it("asks the news endpoint for topic news, with an exact date range and a supported country", () => {
    const req = brave.buildRequest(query({ query: "blue tack", topic: "news", country: "DE", dateRange: { from: "2024-01-01", to: "2024-06-30" }, freshness: "week" }), cfg);
    const url = new URL(req.url);
    expect(url.pathname).toBe("/res/v1/news/search");
    expect(url.searchParams.get("country")).toBe("de");
    expect(url.searchParams.get("freshness")).toBe("2024-01-01to2024-06-30");
    // Brave answers 422 to countries off its list: those are left out (and named in meta.ignored by search).
    expect(new URL(brave.buildRequest(query({ country: "KE" }), cfg).url).searchParams.has("country")).toBe(false);
  });

  it("keeps the upstream path under a rebased base URL", () => {
    const req = brave.buildRequest(query(), { baseUrl: "http://127.0.0.1:7000/brave", key: "k" });
    expect(new URL(req.url).pathname).toBe("/brave/res/v1/web/search");
  });
});
