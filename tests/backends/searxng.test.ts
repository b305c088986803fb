import { describe, expect, it } from "vitest";
import { searxng } from "../../core/backends/searxng.ts";
import { answer, fixture, query } from "./helpers.ts";

describe("searxng.parseResponse (synthetic sample of the documented JSON)", () => {
  it("maps results, decoding snippet markup and dates", () => {
    expect(searxng.parseResponse(answer(fixture("searxng/search_format_json_synthetic.json")), query())).toEqual({
      ok: true,
      results: [
        {
          title: "Blu Tack - Wikipedia",
          url: "https://en.wikipedia.org/wiki/Blu_Tack",
          content: "Blu Tack is a reusable putty-like pressure-sensitive adhesive produced by Bostik.",
          published_at: null,
          rank: 1,
        },
        {
          title: "Blu Tack & friends",
          url: "https://www.bostik.com/uk/diy/products/blu-tack/",
          content: "The original reusable adhesive.",
          published_at: "2023-11-23T09:26:19Z",
          rank: 2,
        },
      ],
    });
  });

  it("reports an instance whose own engines all failed instead of an empty answer", () => {
    const body = JSON.stringify({ query: "x", results: [], unresponsive_engines: [["google", "CAPTCHA"], ["bing", "timeout"]] });
    const outcome = searxng.parseResponse(answer(body), query());
    expect(outcome).toEqual({ ok: false, error: { class: "http", message: expect.stringContaining("google: CAPTCHA") } });
    expect(searxng.parseResponse(answer('{"query":"x","results":[]}'), query())).toEqual({ ok: true, results: [] });
  });

  it("explains a 403 (json format not enabled)", () => {
    const outcome = searxng.parseResponse(answer("Forbidden", 403), query());
    expect(outcome.ok === false && outcome.error).toMatchObject({ class: "blocked", message: expect.stringContaining("search.formats") });
  });

  it("classifies malformed bodies, 429 and 5xx", () => {
    for (const body of ["", "<!DOCTYPE html><html>", "{}", '{"results": {}}']) {
      const outcome = searxng.parseResponse(answer(body), query());
      expect(outcome.ok === false && outcome.error.class, body).toBe("parse");
    }
    const limited = searxng.parseResponse(answer("Too Many Requests", 429, { "retry-after": "60" }), query());
    expect(limited.ok === false && limited.error).toMatchObject({ class: "rate_limited", retryAfterSeconds: 60 });
    const down = searxng.parseResponse(answer("", 500), query());
    expect(down.ok === false && down.error.class).toBe("http");
  });
});

describe("searxng.parseResponse images", () => {
  it("keeps a news or image engine's img_src / thumbnail as the result's image, http(s) only", () => {
    const body = JSON.stringify({ results: [
      { url: "https://a.example/1", title: "a", content: "", img_src: "https://a.example/1.jpg" },
      { url: "https://a.example/2", title: "b", content: "", img_src: "", thumbnail: "https://a.example/2-small.jpg" },
      { url: "https://a.example/3", title: "c", content: "", thumbnail: "javascript:alert(1)" },
    ] });
    const outcome = searxng.parseResponse(answer(body), query());
    expect(outcome.ok && outcome.results.map((r) => r.image)).toEqual(["https://a.example/1.jpg", "https://a.example/2-small.jpg", undefined]);
  });
});

describe("searxng.buildRequest", () => {
  it("asks the news category for topic news and a country's locale", () => {
    const url = new URL(searxng.buildRequest(query({ query: "blue tack", topic: "news", country: "DE", language: "en" }), { baseUrl: "https://s.example.org" }).url);
    expect(url.searchParams.get("categories")).toBe("news");
    expect(url.searchParams.get("language")).toBe("en-DE");
  });

  it("asks /search for JSON under the operator's path prefix", () => {
    const req = searxng.buildRequest(query({ query: "blue tack", freshness: "month", page: 2, language: "fr-CA" }), {
      baseUrl: "https://search.example.org/searx",
    });
    const url = new URL(req.url);
    expect(url.origin + url.pathname).toBe("https://search.example.org/searx/search");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      q: "blue tack",
      format: "json",
      categories: "general",
      language: "fr",
      time_range: "month",
      pageno: "2",
    });
  });
});
