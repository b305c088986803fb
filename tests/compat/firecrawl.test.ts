/**
 * The real `@mendable/firecrawl-js`, unchanged, against a real Quarry server over HTTP
 * (`apiUrl` = `{server}/compat/firecrawl`): the v2 client (`Firecrawl`) and its v1 client
 * (`FirecrawlAppV1`); refusals as the client's own errors; usage counted as the native calls.
 */
import Firecrawl, { FirecrawlAppV1, SdkError } from "@mendable/firecrawl-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, QUESTION, startHarness, type Harness } from "./harness.ts";

let h: Harness;
const v2 = (apiKey: string) => new Firecrawl({ apiKey, apiUrl: `${h.url}/compat/firecrawl`, maxRetries: 1 });
const v1 = (apiKey: string) => new FirecrawlAppV1({ apiKey, apiUrl: `${h.url}/compat/firecrawl` });
const BAD = `qry_${"0".repeat(64)}`;

beforeAll(async () => {
  h = await startHarness();
  await h.exhaust();
}, 90_000);
afterAll(async () => h?.close());

describe("Firecrawl v2 client against /compat/firecrawl", () => {
  it("scrape: markdown, html and links of the page, its metadata", async () => {
    const url = `${h.site.url}/article`;
    const doc = await v2(h.keys.full).scrape(url, { formats: ["markdown", "html", "links"], onlyMainContent: true });
    expect(doc.markdown).toContain("Log-structured merge trees write sorted runs");
    expect(doc.markdown).not.toContain("Home");
    expect(doc.html).toContain("<p>");
    // Every link of the page, as Firecrawl's links are: the nav's too, not only the article's (issue #31).
    expect(doc.links).toEqual([`${h.site.url}/`, `${h.site.url}/other`]);
    expect(doc.metadata?.title).toBe("Compaction in LSM trees");
    expect(doc.metadata?.description).toBe("Why LSM trees compact");
    expect(doc.metadata?.statusCode).toBe(200);
    expect(doc.metadata?.sourceURL).toBe(url);
    expect(doc.warning).toBeUndefined();
  }, 30_000);

  it("scrape: a format Quarry lacks is accepted and named in the document's warning", async () => {
    const doc = await v2(h.keys.full).scrape(`${h.site.url}/article`, { formats: ["markdown", "branding"], mobile: true });
    expect(doc.markdown).toContain("compaction");
    expect(doc.warning).toContain("formats.branding");
    expect(doc.warning).toContain("mobile");
  }, 30_000);

  it("search: web results with their pages as markdown when asked", async () => {
    const res = await v2(h.keys.full).search(QUESTION, { limit: 3, includeDomains: ["127.0.0.1"], scrapeOptions: { formats: ["markdown"] } });
    expect(res.web?.length).toBe(3);
    for (const r of res.web as Array<{ url: string; title: string; description: string; markdown: string }>) {
      expect(new URL(r.url).hostname).toBe("127.0.0.1");
      expect(r.title.length).toBeGreaterThan(0);
      expect(r.description.length).toBeGreaterThan(0);
      expect(r.markdown.length).toBeGreaterThan(500);
    }
    const plain = await v2(h.keys.full).search(QUESTION, { limit: 10, tbs: "qdr:y" });
    expect((plain.web ?? []).map((r) => new URL((r as { url: string }).url).hostname)).toContain("example.org");
  }, 60_000);

  it("a bad key, a missing scope and an exhausted quota are SdkErrors with Firecrawl's status codes", async () => {
    const bad = await errorOf(v2(BAD).scrape(`${h.site.url}/article`));
    expect(bad).toBeInstanceOf(SdkError);
    expect((bad as SdkError).status).toBe(401);
    expect((bad as SdkError).code).toBe("invalid_key");
    const scope = await errorOf(v2(h.keys.narrow).scrape(`${h.site.url}/article`));
    expect((scope as SdkError).status).toBe(403);
    expect(scope.message).toContain('"scrape" scope');
    const quota = await errorOf(v2(h.keys.tight).search(QUESTION));
    expect((quota as SdkError).status).toBe(402);
    expect((quota as SdkError).code).toBe("quota_exceeded");
    const privateUrl = await errorOf(v2(h.keys.full).scrape("http://10.1.2.3/"));
    expect((privateUrl as SdkError).status).toBe(403);
  }, 30_000);
});

describe("Firecrawl v1 client against /compat/firecrawl", () => {
  it("scrape and search with v1's shapes", async () => {
    const doc = await v1(h.keys.full).scrapeUrl(`${h.site.url}/article`, { formats: ["markdown", "links"] });
    expect(doc.success).toBe(true);
    if (!doc.success) throw new Error("scrape failed");
    expect(doc.markdown).toContain("Log-structured merge trees write sorted runs");
    // Every link of the page, as Firecrawl's links are: the nav's too, not only the article's (issue #31).
    expect(doc.links).toEqual([`${h.site.url}/`, `${h.site.url}/other`]);
    expect(doc.metadata?.statusCode).toBe(200);
    const found = await v1(h.keys.full).search(QUESTION, { limit: 4 });
    expect(found.success).toBe(true);
    expect(found.data.length).toBe(4);
    for (const d of found.data) {
      expect(typeof d.url).toBe("string");
      expect(typeof d.title).toBe("string");
      expect(typeof d.description).toBe("string");
    }
  }, 30_000);

  it("refusals are FirecrawlErrors carrying Firecrawl's status codes", async () => {
    const bad = await errorOf(v1(BAD).scrapeUrl(`${h.site.url}/article`, {}));
    expect((bad as Error & { statusCode: number }).statusCode).toBe(401);
    const scope = await errorOf(v1(h.keys.narrow).scrapeUrl(`${h.site.url}/article`, {}));
    expect((scope as Error & { statusCode: number }).statusCode).toBe(403);
    expect(scope.message).toContain('"scrape" scope');
    const quota = await errorOf(v1(h.keys.tight).search(QUESTION, {}));
    expect((quota as Error & { statusCode: number }).statusCode).toBe(402);
    expect(quota.message).toMatch(/quota/i);
  }, 30_000);
});

describe("usage through the Firecrawl API", () => {
  it("counts exactly as the same native calls", async () => {
    const before = await h.usage(h.keys.full);
    const twinBefore = await h.usage(h.keys.twin);
    await v2(h.keys.full).scrape(`${h.site.url}/article`);
    await v2(h.keys.full).search(QUESTION, { limit: 2 });
    await v1(h.keys.full).scrapeUrl(`${h.site.url}/other`, {});
    await errorOf(v2(h.keys.full).scrape("file:///etc/passwd"));
    const post = (path: string, body: unknown) => fetch(h.url + path, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${h.keys.twin}` }, body: JSON.stringify(body) }).then((r) => r.text());
    await post("/v1/scrape", { url: `${h.site.url}/article` });
    await post("/v1/search", { query: QUESTION, max_results: 2 });
    await post("/v1/scrape", { url: `${h.site.url}/other` });
    await post("/v1/scrape", { url: "file:///etc/passwd" });
    const after = await h.usage(h.keys.full);
    const twinAfter = await h.usage(h.keys.twin);
    const delta = (a: Record<string, number>, b: Record<string, number>) => Object.fromEntries(Object.keys(a).map((k) => [k, a[k]! - (b[k] ?? 0)]));
    expect(delta(after.endpoints, before.endpoints)).toEqual(delta(twinAfter.endpoints, twinBefore.endpoints));
    expect(after.used - before.used).toBe(3);
  }, 60_000);
});
