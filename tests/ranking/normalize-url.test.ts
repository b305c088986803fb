import { describe, expect, it } from "vitest";
import { dedupKey, normalizeUrl, stripTracking } from "../../core/ranking/normalize-url.ts";

describe("normalizeUrl", () => {
  it("canonicalises scheme, host, port, path, fragment and query", () => {
    expect(normalizeUrl("HTTP://WWW.Example.COM:80/Docs/Page/?b=2&utm_source=x&a=1#top")).toBe("http://example.com/Docs/Page?a=1&b=2");
    expect(normalizeUrl("https://example.com:443/")).toBe("https://example.com");
    expect(normalizeUrl("https://example.com:8443/x")).toBe("https://example.com:8443/x");
    expect(normalizeUrl("https://user:pw@example.com/x")).toBe("https://example.com/x");
    expect(normalizeUrl("https://example.com/how%2Ddo%2di%3f")).toBe("https://example.com/how-do-i%3F");
  });

  it("drops tracking parameters and sorts the rest", () => {
    expect(normalizeUrl("https://example.com/?gclid=1&fbclid=2&ref=hn&utm_medium=m&UTM_Campaign=c&q=x&id=3")).toBe("https://example.com?id=3&q=x");
    expect(normalizeUrl("https://example.com/?utm_source=x")).toBe("https://example.com");
  });

  it("leaves what it cannot parse alone", () => {
    expect(normalizeUrl("  not a url ")).toBe("not a url");
    expect(normalizeUrl("mailto:a@example.com")).toBe("mailto:a@example.com");
  });

  it("gives every spelling of one page the same dedup key", () => {
    const spellings = [
      "https://example.com/a/b?x=1&y=2",
      "http://example.com/a/b?x=1&y=2",
      "https://www.example.com/a/b/?y=2&x=1",
      "https://EXAMPLE.com:443/a/b?x=1&y=2&utm_source=newsletter&utm_medium=email",
      "https://example.com/a/b?x=1&y=2#section-3",
      "http://www.example.com:80/a/b/?fbclid=abc&x=1&y=2",
    ];
    expect(new Set(spellings.map(dedupKey))).toEqual(new Set(["example.com/a/b?x=1&y=2"]));
    expect(dedupKey("https://example.com/a/c")).not.toBe(dedupKey("https://example.com/a/b"));
    expect(dedupKey("https://blog.example.com/a/b")).not.toBe(dedupKey("https://example.com/a/b"));
  });
});

describe("stripTracking", () => {
  it("removes tracking parameters only, keeping order and fragment", () => {
    expect(stripTracking("https://www.example.com/p?z=1&utm_source=x&a=2#s")).toBe("https://www.example.com/p?z=1&a=2#s");
    expect(stripTracking("https://www.example.com/p?utm_source=x")).toBe("https://www.example.com/p");
    expect(stripTracking("https://www.example.com/p?q=a%20b")).toBe("https://www.example.com/p?q=a%20b");
  });
});
