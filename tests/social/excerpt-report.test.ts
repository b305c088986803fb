import { describe, expect, it } from "vitest";
import { bluesky } from "../../core/backends/social/bluesky.ts";
import { reddit } from "../../core/backends/social/reddit.ts";
import { excerpt, sentences, tokenCount, truncateTokens } from "../../core/operations/social/excerpt.ts";
import { buildReport } from "../../core/operations/social/report.ts";
import { parsed } from "./items.ts";

const longText = parsed(reddit, "reddit/oauth_r_all_search_praw_oauth_search.json")[0]!.text;

describe("excerpt", () => {
  it("counts o200k_base tokens and keeps short texts whole", () => {
    expect(tokenCount("")).toBe(0);
    expect(tokenCount("hello world")).toBe(2);
    expect(excerpt("Short text.", "x", 200)).toEqual({ text: "Short text.", tokens: 3 });
    expect(excerpt("anything", "x", 0)).toEqual({ text: "", tokens: 0 });
    // A post quoting a special token is just text.
    expect(tokenCount("a <|endoftext|> b")).toBeGreaterThan(3);
    expect(excerpt("<|endoftext|> ".repeat(100), "x", 10).tokens).toBeLessThanOrEqual(10);
  });

  it("never exceeds the budget, and reports the true count", () => {
    expect(tokenCount(longText)).toBeGreaterThan(800);
    for (const budget of [1, 5, 50, 200, 800]) {
      const cut = excerpt(longText, "banned accounts subreddit", budget);
      expect(cut.tokens).toBeLessThanOrEqual(budget);
      expect(cut.tokens).toBe(tokenCount(cut.text));
      expect(cut.text.length).toBeGreaterThan(0);
    }
    expect(tokenCount(truncateTokens(longText, 10))).toBeLessThanOrEqual(10);
  });

  it("starts at the sentence that best matches the query; tier full reads from the start", () => {
    const focused = excerpt(longText, "karma commentaires", 60);
    expect(focused.text).toContain("karma");
    const fromStart = excerpt(longText, "karma commentaires", 60, false);
    expect(fromStart.text.startsWith("solved")).toBe(true);
  });

  it("splits sentences on ends followed by a capital, and on lines", () => {
    expect(sentences("One. Two! three? Four\nFive")).toEqual(["One.", "Two! three?", "Four", "Five"]);
  });
});

describe("buildReport", () => {
  const posts = parsed(bluesky, "bluesky/app.bsky.feed.searchPosts_redistricting.json");
  const sources = posts.map((p, i) => ({ id: p.id, title: p.title, text: p.text, score: 1 - i / 100 }));

  it("groups sources into themes and cites every sentence with an existing source id", () => {
    const report = buildReport("redistricting", sources);
    const ids = new Set(sources.map((s) => s.id));
    expect(report.themes.length).toBeGreaterThan(1);
    expect(report.themes.length).toBeLessThanOrEqual(6);
    for (const theme of report.themes) {
      expect(theme.label).not.toBe("");
      expect(theme.source_ids.length).toBeGreaterThan(0);
      for (const id of theme.source_ids) expect(ids.has(id)).toBe(true);
      expect(theme.citations.length).toBeGreaterThan(0);
      for (const c of theme.citations) {
        expect(c.source_ids.every((id) => theme.source_ids.includes(id))).toBe(true);
        expect(theme.summary).toContain(`[${c.source_ids.join(", ")}]`);
        // Extractive: the sentence is the source's own words (clipped at most).
        const source = sources.find((s) => s.id === c.source_ids[0])!;
        expect(`${source.title}\n${source.text}`.replace(/\s+/g, " ")).toContain(c.text.replace(/…$/, "").replace(/\s+/g, " "));
      }
    }
    // Each source sits in exactly one theme.
    const all = report.themes.flatMap((t) => t.source_ids);
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBe(sources.length);
    // The summary is made of cited sentences only.
    expect(report.citations.length).toBeGreaterThan(0);
    for (const c of report.citations) {
      expect(ids.has(c.source_ids[0]!)).toBe(true);
      expect(report.summary).toContain(c.text);
    }
    expect(report.summary.match(/\[[^\]]+\]/g)).toHaveLength(report.citations.length);
  });

  it("is deterministic and empty for no sources", () => {
    expect(buildReport("redistricting", sources)).toEqual(buildReport("redistricting", sources));
    expect(buildReport("x", [])).toEqual({ summary: "", citations: [], themes: [] });
    const single = buildReport("x", [{ id: "hn:1", title: "Only one", text: "", score: 1 }]);
    expect(single.themes).toEqual([{ label: "discussion", summary: "Only one. [hn:1]", source_ids: ["hn:1"], citations: [{ text: "Only one", source_ids: ["hn:1"] }] }]);
  });
});
