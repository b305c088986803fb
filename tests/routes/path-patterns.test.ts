/**
 * Crawl path patterns (and Tavily's select_paths) are regular expressions the server runs against
 * paths a crawled site chooses. A pattern that repeats a repetition, such as (a+)+$, made one link
 * (/aaaa…a!) stall the whole process for minutes; those are refused with a 400 that says why,
 * while the patterns people write (prefixes, classes, single quantifiers) still pass.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { patternProblem } from "../../core/operations/crawl/patterns.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";

describe("patternProblem", () => {
  it("refuses groups that repeat a repetition or an alternation, whatever the spelling", () => {
    for (const p of ["(a+)+$", "(a*)*", "(a|a)*$", "(\\w+\\s?)*$", "(?:x+y?)+", "((ab)*c)+", "(a{2,})+", "([a-z]+/)+$", "(a|b){2,}", "(?<n>a+){3,9}"]) {
      expect(patternProblem(p), p).toBe("exponential");
    }
  });
  it("accepts the patterns people write, and reports invalid ones as invalid", () => {
    for (const p of ["^/docs/", "/details", "^/$", "^/sub", "^/docs/[a-z]+$", "blog/.*", "^/(en|fr)/", "(ab)+", "(a+)?", "(a+){1}", "[(a+)+]", "\\(a+\\)+", "^/p/\\d+$", "(?:x)+"]) {
      expect(patternProblem(p), p).toBeNull();
    }
    expect(patternProblem("([")).toBe("invalid");
  });
});

describe("routes refuse exponential path patterns", () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await makeApp({ env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32" } });
    key = (await t.key("acme", ["scrape"])).secret;
  });
  afterAll(async () => {
    await t?.close();
  });

  it("POST /v1/crawl: 400 naming the field, nothing started or counted", async () => {
    for (const field of ["include_paths", "exclude_paths"]) {
      const res = await t.request("/v1/crawl", { method: "POST", key, json: { url: "http://127.0.0.1:9/", [field]: ["^/ok/", "(a+)+$"] } });
      expect(res.status).toBe(400);
      const err = (await res.json()).error;
      expect(err.code).toBe("invalid_request");
      expect(err.details).toEqual([expect.objectContaining({ field: `${field}.1`, message: expect.stringContaining("exponential") })]);
    }
    expect((await (await t.request("/v1/usage", { key })).json()).used).toBe(0);
  });

  it("Tavily /map and /crawl: 400 before anything is fetched", async () => {
    const map = await t.request("/compat/tavily/map", { method: "POST", key, json: { url: "http://127.0.0.1:9/", select_paths: ["(a|a)*$"] } });
    expect(map.status).toBe(400);
    expect((await map.json()).detail.error).toMatch(/exponential/);
    const crawl = await t.request("/compat/tavily/crawl", { method: "POST", key, json: { url: "http://127.0.0.1:9/", exclude_paths: ["(\\w+\\s?)*$"] } });
    expect(crawl.status).toBe(400);
    // In Tavily's own field names, not the native crawl's include_paths.
    const invalid = await t.request("/compat/tavily/crawl", { method: "POST", key, json: { url: "http://127.0.0.1:9/", select_paths: ["(["] } });
    expect(invalid.status).toBe(400);
    expect((await invalid.json()).detail.error).toMatch(/^select_paths and exclude_paths/);
    expect((await t.request("/v1/usage", { key }).then((r) => r.json())).used).toBe(0);
  });
});
