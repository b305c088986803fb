import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { parseCaptions } from "../../core/backends/youtube/caption-formats.ts";
import { countTokens, truncateToTokens } from "../../core/budget/tokens.ts";
import { formatTimestamp } from "../../core/budget/timestamps.ts";
import { buildWindows } from "../../core/budget/transcript-windows.ts";
import { rankWindows } from "../../core/budget/window-ranking.ts";
import { excerptForTier, fullTranscript, TIER_TOKEN_BUDGET, transcriptExcerpt, type Tier } from "../../core/budget/transcript-excerpt.ts";
import { yt } from "./helpers.ts";

const SEGMENTS = parseCaptions(yt("timedtext_json3_asr_en.json"))!;
/** o200k counted independently of the module under test. */
const o200k = (text: string) => encode(text, { disallowedSpecial: new Set() }).length;
const MARKER = /\[(?:\d+:)?\d{2}:\d{2}\]/g;

function markerTimes(text: string): number[] {
  return [...text.matchAll(MARKER)].map((m) => {
    const parts = m[0].slice(1, -1).split(":").map(Number);
    return parts.reduce((acc, p) => acc * 60 + p, 0);
  });
}

describe("token counting", () => {
  it("counts o200k tokens and treats special-token text as plain text", () => {
    expect(countTokens("")).toBe(0);
    expect(countTokens("hello world")).toBe(o200k("hello world"));
    expect(countTokens("a <|endoftext|> b")).toBe(o200k("a <|endoftext|> b"));
  });

  it("truncates to a word boundary within the limit", () => {
    const text = SEGMENTS.slice(0, 40).map((s) => s.text).join(" ");
    for (const n of [1, 7, 50, 123]) {
      const cut = truncateToTokens(text, n);
      expect(o200k(cut)).toBeLessThanOrEqual(n);
      expect(text.startsWith(cut)).toBe(true);
      expect(text[cut.length] === undefined || text[cut.length] === " ").toBe(true);
    }
    expect(truncateToTokens("short", 10)).toBe("short");
    expect(truncateToTokens("emoji 🎉🎉🎉🎉 text", 3).includes("\uFFFD")).toBe(false);
  });
});

describe("timestamps and windows", () => {
  it("formats [mm:ss] and [h:mm:ss] past an hour", () => {
    expect(formatTimestamp(0)).toBe("[00:00]");
    expect(formatTimestamp(65_900)).toBe("[01:05]");
    expect(formatTimestamp(3_599_000)).toBe("[59:59]");
    expect(formatTimestamp(3_600_000)).toBe("[1:00:00]");
    expect(formatTimestamp(3_725_000)).toBe("[1:02:05]");
  });

  it("cuts ~30 s windows that cover every segment once, in order", () => {
    const windows = buildWindows(SEGMENTS);
    expect(windows.length).toBeGreaterThan(80);
    expect(windows[0]!.from).toBe(0);
    expect(windows.at(-1)!.to).toBe(SEGMENTS.length);
    for (let i = 1; i < windows.length; i++) {
      expect(windows[i]!.from).toBe(windows[i - 1]!.to);
      expect(windows[i]!.startMs - windows[i - 1]!.startMs).toBeLessThanOrEqual(30_000 + 10_000);
    }
  });

  it("closes a window at a sentence end past 60 % of its span", () => {
    const segs = [
      { startMs: 0, durationMs: 10_000, text: "First part" },
      { startMs: 10_000, durationMs: 10_000, text: "ends here." },
      { startMs: 20_000, durationMs: 5_000, text: "Next thought" },
    ];
    expect(buildWindows(segs).map((w) => w.text)).toEqual(["First part ends here.", "Next thought"]);
  });
});

describe("window ranking", () => {
  it("puts windows that say the query first, zero where nothing matches", () => {
    const windows = buildWindows(SEGMENTS);
    const { scores, coverage } = rankWindows(windows, "Google Drive link mind map");
    const best = windows[scores.indexOf(Math.max(...scores))]!;
    expect(best.text).toMatch(/google drive link/i);
    expect(coverage).toBe(1);
    expect(rankWindows(windows, "quantum chromodynamics")).toEqual({ scores: new Float64Array(windows.length), coverage: 0 });
    expect(rankWindows(windows, "mind map quantum").coverage).toBeCloseTo(2 / 3);
    expect(rankWindows(windows, "").scores.every((s) => s === 0)).toBe(true);
  });

  it("counts plurals and ignores case; non-ASCII text goes through the Unicode tokenizer", () => {
    const w = (text: string, index = 0) => ({ index, startMs: 0, from: index, to: index + 1, text });
    const ranked = rankWindows([w("Maps and MAP and mapss", 0), w("nothing here", 1), w("Café crème at the café", 2)], "map cafe");
    expect(ranked.scores[0]).toBeGreaterThan(0);
    expect(ranked.scores[1]).toBe(0);
    expect(ranked.scores[2]).toBeGreaterThan(0);
    expect(ranked.coverage).toBe(1);
  });
});

describe("transcript excerpts", () => {
  const queries = ["Google Drive link mind map", "meetup.com speak English in a cafe", "quantum chromodynamics", "the", ""];

  it("never exceeds the tier budget, for every tier and query (counted with o200k)", () => {
    for (const tier of ["summary", "detailed", "full"] as Tier[]) {
      for (const query of queries) {
        const out = excerptForTier(SEGMENTS, query, tier)!;
        expect(out, `${tier} / ${query}`).not.toBeNull();
        const tokens = o200k(out);
        expect(tokens, `${tier} / ${query}`).toBeLessThanOrEqual(TIER_TOKEN_BUDGET[tier]);
        expect(tokens, `${tier} / ${query} fills most of its budget`).toBeGreaterThan(TIER_TOKEN_BUDGET[tier] * 0.8);
      }
    }
    for (const budget of [1, 5, 16, 17, 40, 333]) {
      const out = transcriptExcerpt(SEGMENTS, "mind map", budget);
      if (out !== null) expect(o200k(out)).toBeLessThanOrEqual(budget);
    }
  });

  it("basic has no transcript; an empty transcript has no excerpt", () => {
    expect(excerptForTier(SEGMENTS, "mind map", "basic")).toBeNull();
    expect(excerptForTier([], "mind map", "summary")).toBeNull();
  });

  it("is on topic for a query drawn from the transcript", () => {
    const out = excerptForTier(SEGMENTS, "Google Drive link mind map", "summary")!;
    expect(out).toMatch(/google drive link/i);
    expect(out).toMatch(/mind map/i);
    const detailed = excerptForTier(SEGMENTS, "meetup.com speak English in a cafe", "detailed")!;
    expect(detailed).toMatch(/meet ?up/i);
    expect(detailed).toMatch(/cafe/i);
  });

  it("keeps time order, opens every piece with a marker, separates gaps with …", () => {
    for (const tier of ["summary", "detailed"] as Tier[]) {
      const out = excerptForTier(SEGMENTS, "speak fluently subtitles", tier)!;
      expect(out.startsWith("[")).toBe(true);
      const times = markerTimes(out);
      expect(times.length).toBeGreaterThan(1);
      expect([...times].sort((a, b) => a - b)).toEqual(times);
      for (const piece of out.split(" … ")) expect(piece).toMatch(/^\[(?:\d+:)?\d{2}:\d{2}\] \S/);
    }
  });

  it("without a match: the opening plus evenly spaced samples", () => {
    const out = excerptForTier(SEGMENTS, "quantum chromodynamics", "detailed")!;
    const times = markerTimes(out);
    expect(times[0]).toBe(0);
    expect(times.at(-1)!).toBeGreaterThan(30 * 60); // reaches well into the 50-minute video
    expect(out.split(" … ").length).toBeGreaterThan(3);
  });

  it("full is the whole transcript from the start, in order, cut to 4000 tokens", () => {
    const out = fullTranscript(SEGMENTS, 4000)!;
    expect(out.startsWith("[00:00] in the comments all right")).toBe(true);
    expect(out).not.toContain(" … ");
    expect(o200k(out)).toBeLessThanOrEqual(4000);
    const times = markerTimes(out);
    expect(times.every((t, i) => i === 0 || t > times[i - 1]!)).toBe(true);
    const short = fullTranscript(SEGMENTS.slice(0, 10), 4000)!;
    expect(short).toContain("in the comments all right oh good I think we found some comments");
  });

  it("uses [h:mm:ss] markers past an hour", () => {
    const late = SEGMENTS.map((s) => ({ ...s, startMs: s.startMs + 3_000_000 }));
    const out = excerptForTier(late, "goodbye everybody", "summary")!;
    expect(out).toMatch(/\[1:\d{2}:\d{2}\]/);
  });
});
