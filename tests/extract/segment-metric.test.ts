/**
 * The multilingual set's segment metric (trafilatura's, see
 * bench/README.md) on hand-made cases with hand-counted results.
 */
import { describe, expect, it } from "vitest";
import { collapse, segmentCounts, segmentScore } from "../../bench/extraction/segment-metric.ts";

describe("collapse", () => {
  it("folds every whitespace run, no-break spaces and newlines included, and trims", () => {
    expect(collapse("  a\n\n b\t\u00a0c  ")).toBe("a b c");
  });
});

describe("segmentCounts", () => {
  const withSegs = ["The first sentence", "second  paragraph\nstarts", "never extracted"];
  const withoutSegs = ["Accept cookies", "Related: more news", " Subscribe now "];

  it("counts found `with` segments as true positives, missing ones as false negatives", () => {
    const text = "The first sentence of it.\n\nThe second paragraph starts here.";
    const c = segmentCounts(text, withSegs, withoutSegs);
    expect([c.tp, c.fn, c.fp]).toEqual([2, 1, 0]);
    expect(c.missed).toEqual(["never extracted"]);
  });

  it("counts found `without` segments as false positives, whitespace collapsed on both sides", () => {
    const text = "The first sentence.\nAccept\n cookies\u00a0please. Subscribe   now!";
    const c = segmentCounts(text, withSegs, withoutSegs);
    expect([c.tp, c.fn, c.fp]).toEqual([1, 2, 2]);
    expect(c.leaked).toEqual(["Accept cookies", "Subscribe now"]);
  });

  it("is case-sensitive, as a substring test", () => {
    expect(segmentCounts("the first sentence", ["The first sentence"], []).tp).toBe(0);
  });

  it("a failure (null) counts as empty text: every `with` segment missed, nothing leaked", () => {
    const c = segmentCounts(null, withSegs, withoutSegs);
    expect([c.tp, c.fn, c.fp]).toEqual([0, 3, 0]);
  });
});

describe("segmentScore", () => {
  it("micro-averages: counts are summed over pages before precision and recall", () => {
    // Page 1: tp 1, fn 0, fp 1. Page 2: tp 3, fn 1, fp 0. Summed: tp 4, fn 1, fp 1.
    // Macro-averaging would give precision (0.5 + 1) / 2 = 0.75; the metric gives 4 / 5.
    const s = segmentScore([
      { tp: 1, fn: 0, fp: 1 },
      { tp: 3, fn: 1, fp: 0 },
    ]);
    expect(s.precision).toBeCloseTo(0.8, 10);
    expect(s.recall).toBeCloseTo(0.8, 10);
    expect(s.f).toBeCloseTo(0.8, 10);
    expect(s.pages).toBe(2);
  });

  it("uneven precision and recall give their harmonic mean", () => {
    const s = segmentScore([{ tp: 6, fn: 4, fp: 2 }]); // P 0.75, R 0.6
    expect(s.f).toBeCloseTo((2 * 0.75 * 0.6) / 1.35, 10);
  });

  it("nothing found at all scores 0, not NaN", () => {
    const s = segmentScore([{ tp: 0, fn: 3, fp: 0 }]);
    expect([s.precision, s.recall, s.f]).toEqual([0, 0, 0]);
  });
});
