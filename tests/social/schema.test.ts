import { describe, expect, it } from "vitest";
import { validate } from "../../core/gateway/validate.ts";
import { SocialResearchBody } from "../../core/operations/social/schema.ts";

const parseSocialResearchBody = (body: unknown) => validate(SocialResearchBody, body);

function issues(body: unknown) {
  const out = parseSocialResearchBody(body);
  if (out.ok) throw new Error("expected a failure");
  return out.issues;
}

describe("SocialResearchBody", () => {
  it("fills the defaults and trims the query", () => {
    expect(parseSocialResearchBody({ query: "  rust async  " })).toEqual({ ok: true, value: { query: "rust async", max_sources: 20, tier: "summary" } });
    const full = parseSocialResearchBody({ query: "x", platforms: ["reddit", "hackernews"], max_sources: 50, tier: "full", freshness: "week" });
    expect(full).toEqual({ ok: true, value: { query: "x", platforms: ["reddit", "hackernews"], max_sources: 50, tier: "full", freshness: "week" } });
  });

  it("names the field of every failure", () => {
    expect(issues({ query: "x", platforms: ["hackernews", "myspace"] })).toEqual([{ field: "platforms.1", message: expect.stringContaining("each platform must be one of hackernews") }]);
    expect(issues({ query: "x", platforms: [] })).toEqual([{ field: "platforms", message: "platforms must not be empty" }]);
    expect(issues({ query: "x", platforms: "reddit" })).toEqual([{ field: "platforms", message: "platforms must be an array" }]);
    expect(issues({ query: "x", max_sources: 0 })).toEqual([{ field: "max_sources", message: "max_sources must be at least 1" }]);
    expect(issues({ query: "x", max_sources: 51 })).toEqual([{ field: "max_sources", message: "max_sources must be at most 50" }]);
    expect(issues({ query: "x", max_sources: 2.5 })).toEqual([{ field: "max_sources", message: "max_sources must be a whole number between 1 and 50" }]);
    expect(issues({ query: "x", max_sources: "5" })).toEqual([{ field: "max_sources", message: "max_sources must be a number" }]);
    expect(issues({ query: "x", tier: "premium" })).toEqual([{ field: "tier", message: "tier must be one of basic, summary, detailed, full" }]);
    expect(issues({ query: "x", freshness: "hour" })).toEqual([{ field: "freshness", message: expect.stringContaining("freshness must be one of") }]);
    expect(issues({ query: "   " })).toEqual([{ field: "query", message: "query must not be empty" }]);
    expect(issues({ query: "x".repeat(501) })).toEqual([{ field: "query", message: "query must be at most 500 characters" }]);
    expect(issues({})).toEqual([{ field: "query", message: "query is required" }]);
    expect(issues({ query: 5 })).toEqual([{ field: "query", message: "query must be a string" }]);
    expect(issues({ query: "x", backends: ["hackernews"] })).toEqual([{ field: "backends", message: "unknown field" }]);
  });
});
