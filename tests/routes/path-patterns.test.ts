/**
 * Crawl and map path patterns (and Tavily's select_paths) are regular expressions the server runs
 * against paths a crawled site chooses. On a backtracking engine one link (/aaaa…a!) against (a+)+$,
 * or a longer one against a*a*a*a*a*a*b, stalled the whole process for minutes. They now run on RE2's
 * automaton: any pattern, any path, linear time. Lookaround and backreferences, which RE2 lacks, are a
 * 400 that says why; the patterns people write match as JavaScript's engine matches them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compilePathPattern } from "../../core/jobs/path-patterns.ts";
import { outOfScope, scopeRules } from "../../core/jobs/url-rules.ts";
import type { JobSpec } from "../../core/ports/job-model.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";

/** Paths made to fail each pattern: a backtracking engine needs 2^30 steps or ~10^12 for them. */
const EVIL: Array<[pattern: string, failing: string, matching: string]> = [
  ["^/(a+)+$", `/${"a".repeat(30)}!`, `/${"a".repeat(30)}`],
  ["^/(a|a)*$", `/${"a".repeat(30)}!`, `/${"a".repeat(30)}`],
  ["^/(\\w+\\s?)*$", `/${"word ".repeat(12)}!`, `/${"word ".repeat(12)}`],
  ["a*a*a*a*a*a*b", `/${"a".repeat(400)}`, `/${"a".repeat(400)}b`],
];

describe("path patterns on RE2", () => {
  it("decide the paths a backtracking engine takes minutes on, at once, whatever the pattern", () => {
    for (const [pattern, failing, matching] of EVIL) {
      const re = compilePathPattern(pattern);
      expect(re, pattern).not.toBeNull();
      expect(re!.test(failing), pattern).toBe(false);
      expect(re!.test(matching), pattern).toBe(true);
    }
  }, 10_000);

  it("match the patterns people write as JavaScript's engine does", () => {
    const patterns = ["^/docs/", "/details", "^/$", "^/sub", "^/docs/[a-z]+$", "blog/.*", "^/(en|fr)/", "(ab)+", "^/p/\\d+$", "(?:x)+", "\\.pdf$", "^/blog/\\d{4}/", "(?i)^/DOCS"];
    const paths = ["/", "/docs/", "/docs/intro", "/docs/Intro2", "/details/x", "/subway", "/blog/2024/01/x", "/en/about", "/de/about", "/abab", "/p/12", "/p/12x", "/file.pdf", "/xx", "/DOCS/a"];
    for (const p of patterns) {
      const re = compilePathPattern(p)!;
      expect(re, p).not.toBeNull();
      // (?i) is RE2's inline flag; JavaScript spells it as the i flag.
      const js = p.startsWith("(?i)") ? new RegExp(p.slice(4), "i") : new RegExp(p);
      for (const path of paths) expect(re.test(path), `${p} on ${path}`).toBe(js.test(path));
    }
  });

  it("refuse what RE2 cannot run: lookaround, backreferences, broken syntax", () => {
    for (const p of ["^/(?!private)", "(?<=/)docs", "(a)\\1", "(["]) expect(compilePathPattern(p), p).toBeNull();
  });

  it("keep a stored job's lookaround pattern meaning what it meant (not a wider crawl)", () => {
    const spec = { url: "https://example.com/", allowSubdomains: false, allowExternal: false, includePaths: ["^/(?!private)"], excludePaths: [] } as unknown as JobSpec;
    const rules = scopeRules(spec);
    expect(outOfScope("https://example.com/docs", rules)).toBeNull();
    expect(outOfScope("https://example.com/private/x", rules)).toBe("not_included");
    const evil = scopeRules({ ...spec, includePaths: ["(a+)+$"], excludePaths: ["a*a*a*a*a*a*b"] } as JobSpec);
    expect(outOfScope(`https://example.com/${"a".repeat(400)}!`, evil)).toBe("not_included");
  }, 10_000);
});

describe("routes and path patterns", () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await makeApp({ env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32" } });
    key = (await t.key("acme", ["scrape"])).secret;
  });
  afterAll(async () => {
    await t?.close();
  });

  it("POST /v1/crawl: a pattern RE2 cannot run is a 400 naming the field and why, nothing started or counted", async () => {
    for (const field of ["include_paths", "exclude_paths"]) {
      const res = await t.request("/v1/crawl", { method: "POST", key, json: { url: "http://127.0.0.1:9/", [field]: ["^/ok/", "^/(?!private)"] } });
      expect(res.status).toBe(400);
      const err = (await res.json()).error;
      expect(err.code).toBe("invalid_request");
      expect(err.details).toEqual([expect.objectContaining({ field: `${field}.1`, message: expect.stringContaining("lookaround") })]);
    }
    expect((await (await t.request("/v1/usage", { key })).json()).used).toBe(0);
  });

  it("POST /v1/crawl: patterns that backtrack are accepted now, since nothing can make them slow", async () => {
    const res = await t.request("/v1/crawl", { method: "POST", key, json: { url: "http://127.0.0.1:9/", include_paths: ["(a+)+$"], exclude_paths: ["a*a*a*a*a*a*b"], limit: 1 } });
    expect(res.status).toBeLessThan(300);
    const { id } = await res.json();
    await t.request(`/v1/crawl/${id}`, { method: "DELETE", key });
  });

  it("Tavily /map and /crawl: 400 in Tavily's own field names before anything is fetched", async () => {
    const map = await t.request("/compat/tavily/map", { method: "POST", key, json: { url: "http://127.0.0.1:9/", select_paths: ["(?<=a)b"] } });
    expect(map.status).toBe(400);
    expect((await map.json()).detail.error).toMatch(/^each of select_paths and exclude_paths .*lookaround/);
    const invalid = await t.request("/compat/tavily/crawl", { method: "POST", key, json: { url: "http://127.0.0.1:9/", select_paths: ["(["] } });
    expect(invalid.status).toBe(400);
    expect((await t.request("/v1/usage", { key }).then((r) => r.json())).used).toBe(0);
  });
});
