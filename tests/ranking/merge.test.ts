import { describe, expect, it } from "vitest";
import type { RawResult } from "../../core/backends/types.ts";
import { lexicalScores, queryTerms } from "../../core/ranking/lexical.ts";
import { mergeResults, type PerBackendResults } from "../../core/ranking/merge.ts";
import { rng } from "../helpers/rng.ts";

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const DAY = 86_400_000;

function r(url: string, rank: number, extra: Partial<RawResult> = {}): RawResult {
  return { title: "Some page", url, content: "some text", published_at: null, rank, ...extra };
}

function list(engine: string, urls: string[]): RawResult[] {
  return urls.map((url, i) => r(url, i + 1, { title: `${engine} ${i}` }));
}


function randomInput(seed: number): PerBackendResults {
  const random = rng(seed);
  const words = ["rust", "async", "tokio", "runtime", "guide", "error", "vim", "exit", "queens", "subway"];
  const pick = () => words[Math.floor(random() * words.length)]!;
  const out: Record<string, RawResult[]> = {};
  for (const engine of ["searxng", "duckduckgo", "wikipedia", "brave"]) {
    out[engine] = Array.from({ length: 1 + Math.floor(random() * 20) }, (_, i) =>
      r(`https://${random() < 0.5 ? "www." : ""}site${Math.floor(random() * 8)}.example/${pick()}`, i + 1, {
        title: `${pick()} ${pick()} ${pick()}`,
        content: Array.from({ length: Math.floor(random() * 30) }, pick).join(" "),
      }),
    );
  }
  return out;
}

describe("mergeResults scores", () => {
  it("keeps every score in [0, 1] and is deterministic, whatever the engine order", () => {
    for (let seed = 1; seed <= 50; seed++) {
      const input = randomInput(seed);
      const merged = mergeResults(input, "rust async runtime", {});
      for (const m of merged) {
        expect(m.score).toBeGreaterThanOrEqual(0);
        expect(m.score).toBeLessThanOrEqual(1);
      }
      const reversed = Object.fromEntries(Object.entries(input).reverse());
      expect(mergeResults(reversed, "rust async runtime", {})).toEqual(merged);
      for (let i = 1; i < merged.length; i++) expect(merged[i - 1]!.score).toBeGreaterThanOrEqual(merged[i]!.score);
    }
  });

  it("ranks a URL two engines return above the same position from one engine", () => {
    const merged = mergeResults(
      {
        a: [r("https://a.example/1", 1), r("https://shared.example/", 2)],
        b: [r("https://b.example/1", 1), r("https://shared.example/", 2)],
        c: [r("https://c.example/1", 1), r("https://single.example/", 2)],
      },
      "unrelated words",
    );
    const position = (host: string) => merged.findIndex((m) => m.source === host);
    expect(position("shared.example")).toBeLessThan(position("single.example"));
    expect(merged.find((m) => m.source === "shared.example")!.engines).toEqual(["a", "b"]);
    expect(merged[0]!.source).toBe("shared.example"); // agreement at rank 2 beats one engine's rank 1
  });

  it("ranks a lexical match above a non-match at the same position", () => {
    const merged = mergeResults(
      { a: [r("https://x.example/", 1, { title: "Cooking pasta" })], b: [r("https://y.example/", 1, { title: "How to exit Vim" })] },
      "exit vim",
    );
    expect(merged.map((m) => m.source)).toEqual(["y.example", "x.example"]);
  });

  it("takes a host prior into account, neutral by default", () => {
    const input = { a: [r("https://b-trusted.example/", 1)], b: [r("https://a-other.example/", 1)] };
    // Without a prior the two tie and the URL breaks the tie.
    const neutral = mergeResults(input, "q");
    expect(neutral.map((m) => m.source)).toEqual(["a-other.example", "b-trusted.example"]);
    expect(neutral[0]!.score).toBe(neutral[1]!.score);
    const merged = mergeResults(input, "q", { hostPrior: (host) => (host === "b-trusted.example" ? 1 : 0) });
    expect(merged.map((m) => m.source)).toEqual(["b-trusted.example", "a-other.example"]);
    expect(merged[0]!.score).toBeGreaterThan(merged[1]!.score);
  });
});

describe("mergeResults deduplication", () => {
  it("merges spellings of one page and keeps the best fields", () => {
    const merged = mergeResults(
      {
        a: [r("http://www.example.com/post/?utm_source=feed", 3, { title: "", content: "short" })],
        b: [r("https://example.com/post#comments", 1, { title: "The post", content: "a longer snippet of the post", published_at: "2026-11-20T00:00:00Z" })],
        c: [r("https://EXAMPLE.com/post?fbclid=x", 2, { title: "Post (c)", content: "mid snippet" })],
      },
      "post",
    );
    expect(merged).toHaveLength(1);
    expect(merged[0]).toMatchObject({
      title: "The post",
      url: "https://example.com/post#comments",
      content: "a longer snippet of the post",
      published_at: "2026-11-20T00:00:00Z",
      source: "example.com",
      engines: ["b", "c", "a"],
    });
  });

  it("drops results that are not http(s) URLs and counts an engine once per page", () => {
    const merged = mergeResults({ a: [r("javascript:alert(1)", 1), r("https://ok.example/", 2), r("https://ok.example", 3)] }, "q");
    expect(merged.map((m) => [m.url, m.engines])).toEqual([["https://ok.example/", ["a"]]]);
  });
});

describe("mergeResults filters", () => {
  const input = {
    a: list("a", ["https://docs.example.com/x", "https://www.example.com/y", "https://notexample.com/z", "https://other.org/w"]),
  };

  it("include_domains keeps the domain and its subdomains only", () => {
    expect(mergeResults(input, "q", { includeDomains: ["example.com"] }).map((m) => m.source).sort()).toEqual(["docs.example.com", "example.com"]);
    expect(mergeResults(input, "q", { includeDomains: ["https://www.Other.org/"] }).map((m) => m.source)).toEqual(["other.org"]);
  });

  it("exclude_domains drops the domain and its subdomains", () => {
    expect(mergeResults(input, "q", { excludeDomains: ["example.com"] }).map((m) => m.source).sort()).toEqual(["notexample.com", "other.org"]);
  });

  it("freshness drops known-old results and keeps undated ones", () => {
    const dated = {
      a: [
        r("https://new.example/", 1, { published_at: new Date(NOW - 2 * 3600_000).toISOString() }),
        r("https://week.example/", 2, { published_at: new Date(NOW - 3 * DAY).toISOString() }),
        r("https://old.example/", 3, { published_at: new Date(NOW - 400 * DAY).toISOString() }),
        r("https://undated.example/", 4),
      ],
    };
    const sources = (freshness: "day" | "week" | "year") => mergeResults(dated, "q", { freshness, now: NOW }).map((m) => m.source).sort();
    expect(sources("day")).toEqual(["new.example", "undated.example"]);
    expect(sources("week")).toEqual(["new.example", "undated.example", "week.example"]);
    expect(sources("year")).toEqual(["new.example", "undated.example", "week.example"]);
    expect(() => mergeResults(dated, "q", { freshness: "day" })).toThrow(TypeError);
  });

  it("maxResults caps the list after ranking", () => {
    const merged = mergeResults(input, "q", { maxResults: 2 });
    expect(merged.map((m) => m.url)).toEqual(["https://docs.example.com/x", "https://www.example.com/y"]);
  });
});

describe("lexical scoring", () => {
  it("ignores stopwords unless the query has nothing else", () => {
    expect(queryTerms("How do I exit the Vim editors?")).toEqual(["exit", "vim", "editor"]);
    expect(queryTerms("the who")).toEqual(["the", "who"]);
  });

  it("stays in [0, 1) and rewards matches in the title", () => {
    const [title, snippet, none] = lexicalScores("exit vim", [
      { title: "Exit Vim", content: "" },
      { title: "Editors", content: "to exit vim press escape" },
      { title: "Pasta", content: "boil water" },
    ]);
    expect(title).toBeGreaterThan(snippet!);
    expect(snippet).toBeGreaterThan(none!);
    expect(none).toBe(0);
    expect(title).toBeLessThan(1);
  });
});
