import { describe, expect, it } from "vitest";
import { languageParts, plainText, retryAfterFromHeaders, toIsoUtc, upstreamUrl, withLanguage } from "../../core/backends/upstream.ts";
import { WEB_BACKENDS } from "../../core/backends/catalogue.ts";
import { answer, query } from "./helpers.ts";
import { rng } from "../helpers/rng.ts";

describe("upstream helpers", () => {
  it("rebases scheme, host, port and path prefix, keeping the upstream path", () => {
    expect(upstreamUrl("https://api.example.com", "/v1/search", { q: "a b", n: 3, skip: undefined }).href).toBe("https://api.example.com/v1/search?q=a+b&n=3");
    expect(upstreamUrl("http://127.0.0.1:9/prefix/", "/v1/search", {}).href).toBe("http://127.0.0.1:9/prefix/v1/search");
    expect(withLanguage("https://{lang}.wikipedia.org", "pt-BR")).toBe("https://pt.wikipedia.org");
  });

  it("reads Retry-After as seconds or as a date against the response's Date", () => {
    expect(retryAfterFromHeaders(new Headers({ "retry-after": "120" }))).toBe(120);
    expect(
      retryAfterFromHeaders(new Headers({ "retry-after": "Sun, 22 Nov 2026 12:02:00 GMT", date: "Sun, 22 Nov 2026 12:00:00 GMT" })),
    ).toBe(120);
    expect(retryAfterFromHeaders(new Headers({ "retry-after": "Sun, 22 Nov 2026 12:02:00 GMT" }))).toBeUndefined();
    expect(retryAfterFromHeaders(new Headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(retryAfterFromHeaders(new Headers())).toBeUndefined();
  });

  it("normalises ISO dates to UTC and refuses human text", () => {
    expect(toIsoUtc("2023-11-23T09:26:19")).toBe("2023-11-23T09:26:19Z");
    expect(toIsoUtc("2023-11-23T09:26:19.123+02:00")).toBe("2023-11-23T07:26:19Z");
    expect(toIsoUtc("2023-11-23")).toBe("2023-11-23T00:00:00Z");
    expect(toIsoUtc("1 month ago")).toBeNull();
    expect(toIsoUtc("December 2, 2015")).toBeNull();
    expect(toIsoUtc("2023-13-45")).toBeNull();
    expect(toIsoUtc(null)).toBeNull();
  });

  it("strips snippet markup and decodes entities", () => {
    expect(plainText("a <strong>b</strong> &amp; c&#x27;s &#39;d&#39; &bogus; \n e")).toBe("a b & c's 'd' &bogus; e");
  });

  it("splits language tags", () => {
    expect(languageParts("de-AT")).toEqual({ lang: "de", region: "at" });
    expect(languageParts("zh-Hant-TW")).toEqual({ lang: "zh", region: "tw" });
    expect(languageParts("")).toEqual({ lang: "en", region: null });
  });
});


describe("every parser, on arbitrary bodies", () => {
  const pieces = ["{", "}", "[", "]", '"results"', '"query"', ":", ",", "null", "<html>", "<body class='body--html'>", "<div class='result'>",
    "<a class='result__a' href='/l/?uddg=http%3A%2F%2Fx'>", "</div>", "\u0000", "é", '"web"', '"type":"search"', "1e999", "true"];
  const random = rng(42);

  it("returns an outcome and never throws", () => {
    for (let i = 0; i < 300; i++) {
      const body = Array.from({ length: Math.floor(random() * 12) }, () => pieces[Math.floor(random() * pieces.length)]).join("");
      const status = [200, 200, 202, 204, 301, 403, 429, 500][Math.floor(random() * 8)]!;
      for (const backend of WEB_BACKENDS) {
        const outcome = backend.parseResponse(answer(body, status), query());
        expect(typeof outcome.ok).toBe("boolean");
      }
    }
  });
});
