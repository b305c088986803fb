import { describe, expect, it } from "vitest";
import { analyze, words } from "../../core/collections/analyze.ts";

describe("collections' analysis of English text", () => {
  it("takes a possessive 's off a word, with any of the apostrophes, instead of making 's' a term", () => {
    for (const text of ["Apple's revenue", "Apple’s revenue", "Apple＇s revenue", "APPLE’S REVENUE"]) {
      expect(words(text)).toEqual(["apple", "revenue"]);
      expect(analyze(text)).toEqual(analyze("Apple revenue"));
    }
    expect(words("the company’s 2024’s results")).toEqual(["the", "company", "2024", "results"]);
  });

  it("leaves an 's' that is not a possessive ending alone", () => {
    expect(words("’s alone, it’sy, x’se, plan s")).toEqual(["s", "alone", "it", "sy", "x", "se", "plan", "s"]);
    expect(words("parents’ rights")).toEqual(["parents", "rights"]);
  });
});
