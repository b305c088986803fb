/** The request fields every operation shares (core/schema/fields.ts), through the gateway's validation. */
import { describe, expect, it } from "vitest";
import { validate } from "../../core/gateway/validate.ts";
import { ResearchBody } from "../../core/operations/research/schema.ts";
import { ScrapeBody } from "../../core/operations/scrape/schema.ts";
import { SearchBody } from "../../core/operations/search/schema.ts";
import { SocialResearchBody } from "../../core/operations/social/schema.ts";
import { VideoSearchBody } from "../../core/operations/video/schema.ts";

const OPERATIONS = { search: SearchBody, research: ResearchBody, social: SocialResearchBody, video: VideoSearchBody };

describe("shared request fields", () => {
  it.each(Object.entries(OPERATIONS))("%s counts the query in characters, not UTF-16 units", (_name, schema) => {
    expect(validate(schema, { query: "🔎".repeat(500) }).ok).toBe(true);
    const over = validate(schema, { query: "🔎".repeat(501) });
    expect(over).toEqual({ ok: false, issues: [{ field: "query", message: "query must be at most 500 characters" }] });
  });

  it.each(Object.entries(OPERATIONS))("%s says a missing query is required, in plain words", (_name, schema) => {
    expect(validate(schema, {})).toEqual({ ok: false, issues: [{ field: "query", message: "query is required" }] });
  });

  it.each(Object.entries(OPERATIONS))("%s takes the one tier vocabulary", (_name, schema) => {
    for (const tier of ["basic", "summary", "detailed", "full"]) expect(validate(schema, { query: "q", tier }).ok).toBe(true);
    expect(validate(schema, { query: "q", tier: "premium" })).toMatchObject({ ok: false, issues: [{ field: "tier", message: "tier must be one of basic, summary, detailed, full" }] });
  });

  it("refuses numbers past the safe integer range instead of rounding them", () => {
    expect(validate(SearchBody, { query: "q", max_results: 1e21 }).ok).toBe(false);
    expect(validate(ScrapeBody, { url: "https://example.org", max_tokens: 2 ** 53 + 2 }).ok).toBe(false);
    expect(validate(VideoSearchBody, { query: "q", min_duration: 99999999999999999999999 })).toMatchObject({ ok: false, issues: [{ field: "min_duration" }] });
  });

  it("leaves the scheme of a scrape URL to the operation (a 422, not a 400)", () => {
    expect(validate(ScrapeBody, { url: "file:///etc/passwd" }).ok).toBe(true);
    expect(validate(ScrapeBody, { url: "not a url" }).ok).toBe(false);
  });
});

describe("type checks without words of their own", () => {
  it("say what the field must be in plain words, not valibot's 'Invalid type: Expected …'", async () => {
    const v = await import("valibot");
    const schema = v.strictObject({
      opts: v.optional(v.nullable(v.looseObject({ a: v.optional(v.string()) }))),
      paths: v.optional(v.array(v.string())),
      formats: v.optional(v.array(v.union([v.string(), v.looseObject({ type: v.string() })]))),
      flag: v.optional(v.boolean()),
    });
    expect(validate(schema, { opts: "x" })).toEqual({ ok: false, issues: [{ field: "opts", message: "opts must be an object" }] });
    expect(validate(schema, { paths: [5] })).toEqual({ ok: false, issues: [{ field: "paths.0", message: "paths.0 must be a string" }] });
    expect(validate(schema, { formats: [5] })).toEqual({ ok: false, issues: [{ field: "formats.0", message: "formats.0 must be a string or an object" }] });
    expect(validate(schema, { flag: "yes" })).toEqual({ ok: false, issues: [{ field: "flag", message: "flag must be true or false" }] });
    // A literal or picklist keeps valibot's words, which name the values.
    expect(validate(v.object({ k: v.literal("x") }), { k: "y" })).toMatchObject({ ok: false, issues: [{ field: "k", message: expect.stringContaining('"x"') }] });
  });
});
