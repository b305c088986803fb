import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { VideoSearchBody } from "../../core/operations/video/schema.ts";

function issues(input: unknown): { field: string; message: string }[] {
  const out = v.safeParse(VideoSearchBody, input);
  if (out.success) return [];
  return out.issues.map((i) => ({ field: i.path?.map((p) => String(p.key)).join(".") ?? "", message: i.message }));
}

function fieldOf(input: unknown): string {
  const found = issues(input);
  expect(found.length, JSON.stringify(input)).toBeGreaterThan(0);
  return found[0]!.field;
}

describe("VideoSearchBody", () => {
  it("fills the spec's defaults", () => {
    expect(v.parse(VideoSearchBody, { query: "  rust async  " })).toEqual({
      query: "rust async",
      max_results: 5,
      tier: "summary",
      include_transcript: true,
      language: "en",
    });
  });

  it("accepts every field at its limits", () => {
    const body = {
      query: "x".repeat(500), max_results: 20, tier: "full", include_transcript: false, language: "zh-Hant-TW",
      min_duration: 0, max_duration: 0, freshness: "year",
    };
    expect(v.safeParse(VideoSearchBody, body).success).toBe(true);
    expect(v.safeParse(VideoSearchBody, { query: "a", max_results: 1, tier: "basic", language: "pt-BR" }).success).toBe(true);
    expect(v.safeParse(VideoSearchBody, { query: "🎉".repeat(500) }).success).toBe(true); // characters, not UTF-16 units
  });

  const cases: [string, Record<string, unknown>, string][] = [
    ["query missing", {}, "query"],
    ["query not a string", { query: 42 }, "query"],
    ["query empty after trim", { query: "   " }, "query"],
    ["query over 500 characters", { query: "x".repeat(501) }, "query"],
    ["query over 500 after trim counts trimmed", { query: ` ${"x".repeat(501)} ` }, "query"],
    ["max_results 0", { query: "a", max_results: 0 }, "max_results"],
    ["max_results 21", { query: "a", max_results: 21 }, "max_results"],
    ["max_results fractional", { query: "a", max_results: 2.5 }, "max_results"],
    ["max_results string", { query: "a", max_results: "5" }, "max_results"],
    ["tier unknown", { query: "a", tier: "premium" }, "tier"],
    ["include_transcript not boolean", { query: "a", include_transcript: "yes" }, "include_transcript"],
    ["language not BCP-47", { query: "a", language: "english" }, "language"],
    ["language wrong type", { query: "a", language: 1 }, "language"],
    ["min_duration negative", { query: "a", min_duration: -1 }, "min_duration"],
    ["min_duration fractional", { query: "a", min_duration: 1.5 }, "min_duration"],
    ["max_duration negative", { query: "a", max_duration: -5 }, "max_duration"],
    ["max_duration string", { query: "a", max_duration: "60" }, "max_duration"],
    ["min above max", { query: "a", min_duration: 600, max_duration: 60 }, "max_duration"],
    ["freshness unknown", { query: "a", freshness: "hour" }, "freshness"],
    ["freshness null", { query: "a", freshness: null }, "freshness"],
    ["unknown field", { query: "a", backends: ["youtube"] }, "backends"],
  ];
  it.each(cases)("%s → a failure naming the field", (_name, body, field) => {
    expect(fieldOf(body)).toBe(field);
  });

  it("still reports min > max when other fields are fine", () => {
    expect(issues({ query: "a", min_duration: 61, max_duration: 60 })[0]!.message).toMatch(/max_duration/);
    expect(issues({ query: "a", min_duration: 60, max_duration: 60 })).toEqual([]);
  });

  it("is not an object → failure", () => {
    expect(v.safeParse(VideoSearchBody, "query").success).toBe(false);
    expect(v.safeParse(VideoSearchBody, null).success).toBe(false);
  });
});
