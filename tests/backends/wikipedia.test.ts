import { describe, expect, it } from "vitest";
import { articleUrl, wikipedia } from "../../core/backends/wikipedia.ts";
import { answer, fixture, query } from "./helpers.ts";

const cfg = { baseUrl: "https://{lang}.wikipedia.org" };

describe("wikipedia.parseResponse on the recorded generator=search answer", () => {
  const body = fixture("wikipedia/mw_api_generator_search_formatversion2.json");

  it("orders pages by their index, not by array order", () => {
    const outcome = wikipedia.parseResponse(answer(body), query());
    if (!outcome.ok) throw new Error(outcome.error.message);
    expect(outcome.results).toHaveLength(20);
    expect(outcome.results.map((r) => r.rank)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(outcome.results.slice(0, 4).map((r) => r.title)).toEqual([
      "IND Queens Boulevard Line",
      "Queens Boulevard",
      "Queens",
      "Kew Gardens–Union Turnpike (IND Queens Boulevard Line)",
    ]);
    expect(outcome.results[19]!.title).toBe("Jackson Heights–Roosevelt Avenue/74th Street (New York City Subway)");
  });

  it("builds article URLs and uses the short description as content", () => {
    const outcome = wikipedia.parseResponse(answer(body), query({ maxResults: 3 }));
    if (!outcome.ok) throw new Error(outcome.error.message);
    const { image: _a, ...first } = outcome.results[0]!;
    const { image: _b, ...second } = outcome.results[1]!;
    const { image: queensImage, ...third } = outcome.results[2]!;
    expect([first, second, third]).toEqual([
      { title: "IND Queens Boulevard Line", url: "https://en.wikipedia.org/wiki/IND_Queens_Boulevard_Line", content: "", published_at: null, rank: 1 },
      { title: "Queens Boulevard", url: "https://en.wikipedia.org/wiki/Queens_Boulevard", content: "", published_at: null, rank: 2 },
      {
        title: "Queens",
        url: "https://en.wikipedia.org/wiki/Queens",
        content: "borough of New York City, New York, United States",
        published_at: null,
        rank: 3,
      },
    ]);
    // prop=pageimages: the recorded lead-image thumbnail becomes the result's image.
    expect(queensImage).toBe("https://upload.wikimedia.org/wikipedia/commons/thumb/1/1a/Queens_Montage_2012_1.png/285px-Queens_Montage_2012_1.png");
  });

  it("answers an empty search (no query key) with zero results", () => {
    expect(wikipedia.parseResponse(answer(fixture("wikipedia/mw_api_generator_search_empty.json")), query())).toEqual({ ok: true, results: [] });
  });

  it("prefers fullurl and extracts when the API gives them", () => {
    const body = JSON.stringify({
      batchcomplete: true,
      query: {
        pages: [
          { pageid: 2, ns: 0, title: "B", index: 2, fullurl: "https://en.wikipedia.org/wiki/B", extract: "Bee." },
          { pageid: 1, ns: 0, title: "A", index: 1, fullurl: "https://en.wikipedia.org/wiki/A", extract: "Aye.", description: "letter" },
        ],
      },
    });
    const outcome = wikipedia.parseResponse(answer(body), query());
    expect(outcome.ok && outcome.results.map((r) => [r.rank, r.url, r.content])).toEqual([
      [1, "https://en.wikipedia.org/wiki/A", "Aye."],
      [2, "https://en.wikipedia.org/wiki/B", "Bee."],
    ]);
  });
});

describe("wikipedia.parseResponse failures", () => {
  it("turns malformed bodies into parse errors", () => {
    for (const body of ["", "not json", "[]", "{}", '{"query": {"pages": 3}}', "null"]) {
      const outcome = wikipedia.parseResponse(answer(body), query());
      expect(outcome.ok === false && outcome.error.class, body).toBe("parse");
    }
  });

  it("classifies API errors and HTTP failures", () => {
    const throttled = wikipedia.parseResponse(answer('{"error":{"code":"ratelimited","info":"slow down"}}'), query());
    expect(throttled.ok === false && throttled.error.class).toBe("rate_limited");
    const limited = wikipedia.parseResponse(answer("", 429, { "retry-after": "7" }), query());
    expect(limited).toEqual({ ok: false, error: { class: "rate_limited", message: expect.any(String), retryAfterSeconds: 7 } });
    const down = wikipedia.parseResponse(answer("<html>Wikimedia Error</html>", 503), query());
    expect(down.ok === false && down.error.class).toBe("http");
  });
});

describe("wikipedia.buildRequest", () => {
  it("queries the action API on the language's host", () => {
    const url = new URL(wikipedia.buildRequest(query({ query: "queens", maxResults: 8, language: "de-AT" }), cfg).url);
    expect(url.origin + url.pathname).toBe("https://de.wikipedia.org/w/api.php");
    expect(url.searchParams.get("formatversion")).toBe("2");
    expect(url.searchParams.get("generator")).toBe("search");
    expect(url.searchParams.get("gsrsearch")).toBe("queens");
    expect(url.searchParams.get("gsrlimit")).toBe("8");
    expect(url.searchParams.get("gsroffset")).toBeNull();
  });

  it("keeps /w/api.php under a rebased base URL and pages by offset", () => {
    const url = new URL(wikipedia.buildRequest(query({ maxResults: 10, page: 2 }), { baseUrl: "http://127.0.0.1:9000/wiki" }).url);
    expect(url.origin + url.pathname).toBe("http://127.0.0.1:9000/wiki/w/api.php");
    expect(url.searchParams.get("gsroffset")).toBe("10");
  });

  it("spells article URLs as MediaWiki does", () => {
    expect(articleUrl("en", "Jackson Heights–Roosevelt Avenue/74th Street (New York City Subway)")).toBe(
      "https://en.wikipedia.org/wiki/Jackson_Heights%E2%80%93Roosevelt_Avenue/74th_Street_(New_York_City_Subway)",
    );
  });
});
