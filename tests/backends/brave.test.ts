import { describe, expect, it } from "vitest";
import { brave } from "../../core/backends/brave.ts";
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
        },
      ],
    });
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

describe("brave.buildRequest", () => {
  it("sends the key in X-Subscription-Token and the documented parameters", () => {
    const req = brave.buildRequest(query({ query: "blue tack", maxResults: 50, language: "en-US", freshness: "week", page: 2 }), cfg);
    const url = new URL(req.url);
    expect(url.origin + url.pathname).toBe("https://api.search.brave.com/res/v1/web/search");
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: "blue tack", count: "20", offset: "1", search_lang: "en", country: "us", freshness: "pw" });
    expect(req.headers.get("x-subscription-token")).toBe("BSA-test-key");
    expect(req.url).not.toContain("BSA-test-key");
  });

  it("keeps the upstream path under a rebased base URL", () => {
    const req = brave.buildRequest(query(), { baseUrl: "http://127.0.0.1:7000/brave", key: "k" });
    expect(new URL(req.url).pathname).toBe("/brave/res/v1/web/search");
  });
});
