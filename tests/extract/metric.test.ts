/** The benchmark metric on hand-computed cases (see bench/README.md). */
import { describe, expect, it } from "vitest";
import { pageCounts, pagePrecision, pageRecall, score, shingles, tokenize } from "../../bench/extraction/metric.ts";

describe("tokenize", () => {
  it("keeps maximal runs of letters, digits, marks and underscore, case kept", () => {
    expect(tokenize("Hello, World! it's 2019_v2")).toEqual(["Hello", "World", "it", "s", "2019_v2"]);
    expect(tokenize("café naïve – Ünïcode")).toEqual(["café", "naïve", "Ünïcode"]);
    // A combining mark (U+0301) stays inside its word.
    expect(tokenize("cafe\u0301 ok")).toEqual(["cafe\u0301", "ok"]);
    expect(tokenize("日本語テスト")).toEqual(["日本語テスト"]);
    expect(tokenize("  ...  ")).toEqual([]);
  });
});

describe("shingles", () => {
  it("are 4-token windows counted as a multiset", () => {
    expect([...shingles("a b c d e").entries()]).toEqual([["a b c d", 1], ["b c d e", 1]]);
    expect(shingles("x y z w x y z w").get("x y z w")).toBe(2);
  });
  it("fewer than 4 tokens give one shingle of all of them; none give none", () => {
    expect([...shingles("just three words").entries()]).toEqual([["just three words", 1]]);
    expect([...shingles("one").entries()]).toEqual([["one", 1]]);
    expect(shingles("").size).toBe(0);
    expect(shingles(" -- ").size).toBe(0);
  });
});

describe("per-page counts", () => {
  it("identical texts: all true positives", () => {
    const c = pageCounts("a b c d e", "a b c d e");
    expect(c).toEqual({ tp: 1, fp: 0, fn: 0 });
    expect(pagePrecision(c)).toBe(1);
    expect(pageRecall(c)).toBe(1);
  });

  it("partial overlap, normalised by tp+fp+fn", () => {
    // truth shingles: abcd, bcde, cdef (3); predicted: abcd, bcde, cdex, dexy (4)
    // tp = 2, fp = 2, fn = 1, sum 5
    const c = pageCounts("a b c d e f", "a b c d e x y");
    expect(c.tp).toBeCloseTo(2 / 5);
    expect(c.fp).toBeCloseTo(2 / 5);
    expect(c.fn).toBeCloseTo(1 / 5);
    expect(pagePrecision(c)).toBeCloseTo(0.5);
    expect(pageRecall(c)).toBeCloseTo(2 / 3);
  });

  it("multiset counts: a repeated shingle only matches as often as the truth has it", () => {
    // truth: "p q r s" ×1; prediction: "p q r s" twice among 5 shingles (pqrs, qrsp, rspq, spqr, pqrs)
    const c = pageCounts("p q r s", "p q r s p q r s");
    // tp = 1, fp = 4, fn = 0
    expect(c.tp).toBeCloseTo(1 / 5);
    expect(c.fp).toBeCloseTo(4 / 5);
    expect(c.fn).toBe(0);
  });

  it("short texts (< 4 tokens) compare as single shingles", () => {
    expect(pageCounts("two words", "two words")).toEqual({ tp: 1, fp: 0, fn: 0 });
    const c = pageCounts("two words", "two words more");
    expect(c).toEqual({ tp: 0, fp: 0.5, fn: 0.5 });
  });

  it("empty prediction: recall 0; empty truth: precision 0", () => {
    const missed = pageCounts("a b c d", "");
    expect(missed).toEqual({ tp: 0, fp: 0, fn: 1 });
    expect(pageRecall(missed)).toBe(0);
    const invented = pageCounts("", "a b c d");
    expect(invented).toEqual({ tp: 0, fp: 1, fn: 0 });
    expect(pagePrecision(invented)).toBe(0);
  });

  it("both empty: nothing to count", () => {
    expect(pageCounts("", "")).toEqual({ tp: 0, fp: 0, fn: 0 });
  });
});

describe("score", () => {
  it("averages precision and recall over their own pages, then takes F1 of the means", () => {
    const s = score([
      { truth: "a b c d e f", predicted: "a b c d e x y" }, // P 0.5, R 2/3
      { truth: "a b c d", predicted: "a b c d" }, // P 1, R 1
    ]);
    expect(s.precision).toBeCloseTo(0.75);
    expect(s.recall).toBeCloseTo(5 / 6);
    expect(s.f1).toBeCloseTo((2 * 0.75 * (5 / 6)) / (0.75 + 5 / 6));
  });

  it("a failed page (null) is an empty prediction: it lowers recall and is left out of precision", () => {
    const s = score([
      { truth: "a b c d", predicted: "a b c d" },
      { truth: "e f g h", predicted: null },
    ]);
    expect(s.precision).toBe(1); // only the first page has tp+fp > 0
    expect(s.recall).toBeCloseTo(0.5); // both pages have tp+fn > 0
    expect(s.pages).toBe(2);
  });

  it("is 0 when nothing matches", () => {
    expect(score([{ truth: "a b c d", predicted: "w x y z" }]).f1).toBe(0);
  });
});
