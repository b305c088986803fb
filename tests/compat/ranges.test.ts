/**
 * The compatible routes take what the services they copy take, through the real clients against
 * a real server: Firecrawl's request validation (a value it refuses is a 400 naming the field, and
 * counts nothing; a value it takes that Quarry cannot honour is applied at Quarry's bound and said
 * in `warning` and `quarry.clamped`, which the clients pass by), Firecrawl's reading of a URL
 * without a scheme (`http://` before it, then the usual guards), and Tavily's documented defaults.
 */
import Firecrawl, { FirecrawlAppV1, SdkError } from "@mendable/firecrawl-js";
import { tavily } from "@tavily/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "../helpers/page-server.ts";
import { errorOf, startHarness, type Harness } from "./harness.ts";

const PAGES = 130;
let h: Harness;
let root: string;
/** The page server's address without a scheme: `127.0.0.1:PORT`. */
let bare: string;
const v2 = (apiKey: string) => new Firecrawl({ apiKey, apiUrl: `${h.url}/compat/firecrawl`, maxRetries: 1 });
const v1 = (apiKey: string) => new FirecrawlAppV1({ apiKey, apiUrl: `${h.url}/compat/firecrawl` });
const tvly = (apiKey: string) => tavily({ apiKey, apiBaseURL: `${h.url}/compat/tavily` });
/** Path names without digits: the crawler caps URLs of one numbered shape. */
const slug = (i: number): string => (i < 26 ? String.fromCharCode(97 + i) : slug(Math.floor(i / 26) - 1) + String.fromCharCode(97 + (i % 26)));
const LONE = "<html><head><title>Alone</title></head><body><article><h1>Alone</h1><p>A page with no links at all, long enough to be read as the main content of the page.</p></article></body></html>";

async function firecrawlPost(path: string, body: Record<string, unknown>) {
  const res = await fetch(`${h.url}/compat/firecrawl${path}`, { method: "POST", headers: { authorization: `Bearer ${h.keys.solo}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { success: boolean; error?: string; warning?: string; details?: Array<{ field: string }>; quarry?: { clamped: unknown[] }; id?: string } };
}

beforeAll(async () => {
  h = await startHarness();
  root = `${h.site.url}/site/`;
  bare = h.site.url.replace(/^http:\/\//, "");
  const links = Array.from({ length: PAGES }, (_, i) => `<li><a href="/site/p/${slug(i)}">Article ${i}</a></li>`).join("");
  h.site.route("/site/", send("text/html; charset=utf-8", `<html><head><title>The site</title></head><body><main><h1>All articles</h1><ul>${links}</ul></main></body></html>`));
  for (let i = 0; i < PAGES; i++) h.site.route(`/site/p/${slug(i)}`, send("text/html; charset=utf-8", LONE.replaceAll("Alone", `Article ${slug(i)}`)));
  h.site.route("/lone/", send("text/html; charset=utf-8", LONE));
  h.site.route("/deep/a/b/c/", send("text/html; charset=utf-8", LONE));
  h.site.route("/robots.txt", send("text/plain", "User-agent: *\nAllow: /\n"));
}, 90_000);
afterAll(async () => h?.close());

describe("Firecrawl: a value Firecrawl's own validation refuses", () => {
  it("is a 400 naming the field, through the v2 and v1 clients, and counts nothing", async () => {
    const before = await h.usage(h.keys.solo);
    const client = v2(h.keys.solo);
    const page = `${h.site.url}/article`;
    const wait51 = Array.from({ length: 51 }, () => ({ type: "scroll" as const, direction: "down" as const }));
    // Each call made when its turn comes (made all at once, an early refusal was an unhandled rejection).
    for (const [call, message] of [
      [() => client.map(root, { limit: 0 }), "limit: limit must be at least 1"],
      [() => client.map(root, { limit: 100_001 }), "limit: limit must be at most 100000"],
      [() => client.scrape(page, { timeout: 999 }), "timeout: timeout must be at least 1000 milliseconds"],
      [() => client.scrape(page, { timeout: 1500.5 }), "timeout: timeout must be a whole number of milliseconds"],
      [() => client.scrape(page, { waitFor: 60_001 }), "waitFor: waitFor must be at most 60000 milliseconds"],
      [() => client.scrape(page, { waitFor: 6000, timeout: 10_000 }), "waitFor: waitFor (6000 ms) must not exceed half of timeout (10000 ms), which also covers loading the page"],
      [() => client.scrape(page, { actions: [{ type: "wait", milliseconds: 40_000 }, { type: "wait", milliseconds: 30_000 }] }), "actions: waitFor and the wait actions add up to 70000 ms; Firecrawl takes at most 60000 ms of waiting in all"],
      [() => client.startCrawl(root, { scrapeOptions: { timeout: 2.5 } }), "scrapeOptions.timeout: timeout must be a whole number of milliseconds"],
      [() => client.startCrawl(root, { scrapeOptions: { waitFor: 3000, timeout: 5000 } }), "scrapeOptions.waitFor: waitFor (3000 ms) must not exceed half of timeout (5000 ms), which also covers loading the page"],
      [() => client.startCrawl(root, { maxConcurrency: 0 }), "maxConcurrency: maxConcurrency must be at least 1"],
      [() => client.startCrawl(root, { delay: 61 }), "delay: delay is in seconds and must be at most 60"],
      [() => client.startBatchScrape([page], { options: { actions: wait51 } }), "actions: actions takes at most 50 steps"],
    ] as const) {
      const err = await errorOf(call());
      expect({ status: (err as SdkError).status, message: err.message }, message).toEqual({ status: 400, message });
    }
    // What the SDK refuses itself (a timeout of 0 or less) the route refuses too.
    const raw = await firecrawlPost("/v2/scrape", { url: page, timeout: -5 });
    expect(raw).toMatchObject({ status: 400, body: { success: false, error: "timeout: timeout must be at least 1000 milliseconds", details: [{ field: "timeout" }] } });
    // v1's scrape has a default timeout (30000 ms), and waitFor must fit in half of it too.
    const v1Wait = await errorOf(v1(h.keys.solo).scrapeUrl(page, { waitFor: 20_000 }));
    expect((v1Wait as Error & { statusCode: number }).statusCode).toBe(400);
    expect(v1Wait.message).toContain("waitFor: waitFor (20000 ms) must not exceed half of timeout (Firecrawl v1's default, 30000 ms), which also covers loading the page");
    // v1 refuses a start URL deeper than maxDepth (path segments; 10 unless given).
    const deep = await errorOf(v1(h.keys.solo).asyncCrawlUrl(`${h.site.url}/deep/a/b/c/`, { maxDepth: 2 }));
    expect((deep as Error & { statusCode: number }).statusCode).toBe(400);
    expect(deep.message).toContain("maxDepth: the URL's path is 4 segments deep, more than maxDepth (2); raise maxDepth or start higher up the site");
    // (v1's mapUrl rethrows every failure as a 500 of its own, with only the HTTP status in its message.)
    const v1Map = await errorOf(v1(h.keys.solo).mapUrl(root, { limit: 0 }));
    expect(v1Map.message).toBe("Request failed with status code 400");
    expect((await h.usage(h.keys.solo)).used).toBe(before.used);
  }, 60_000);
});

describe("Firecrawl: a value Firecrawl takes and Quarry cannot honour", () => {
  it("is applied at Quarry's bound and said in warning and quarry.clamped; the clients' answers keep their shape", async () => {
    const lone = `${h.site.url}/lone/`;
    const crawl = await firecrawlPost("/v2/crawl", { url: lone, limit: 20_000, maxDiscoveryDepth: -1, scrapeOptions: { timeout: 90_000 } });
    expect(crawl.status).toBe(200);
    expect(crawl.body.quarry!.clamped).toEqual([
      { option: "limit", requested: 20_000, applied: 10_000, reason: "Quarry crawls at most 10000 pages a job" },
      { option: "maxDiscoveryDepth", requested: -1, applied: 10, reason: "Firecrawl sets no depth bound for a maxDiscoveryDepth below 0 or with a fraction; Quarry follows links at most 10 deep" },
      { option: "scrapeOptions.timeout", requested: 90_000, applied: 60_000, reason: "Quarry gives a page at most 60000 ms" },
    ]);
    expect(crawl.body.warning).toContain("Quarry applied limit 10000 instead of 20000: Quarry crawls at most 10000 pages a job.");
    const v1Crawl = await firecrawlPost("/v1/crawl", { url: lone, maxDepth: 12 });
    expect(v1Crawl.body.quarry!.clamped).toEqual([{ option: "maxDepth", requested: 12, applied: 10, reason: "Quarry follows links at most 10 deep" }]);
    const map = await firecrawlPost("/v2/map", { url: root, limit: 6000, timeout: 90_000 });
    expect(map.status).toBe(200);
    expect(map.body.quarry!.clamped).toEqual([
      { option: "limit", requested: 6000, applied: 5000, reason: "Quarry's map lists at most 5000 URLs" },
      { option: "timeout", requested: 90_000, applied: 60_000, reason: "Quarry's map reads for 1000 to 60000 ms, and answers with what it found by then" },
    ]);
    // A search longer than Quarry's 200 characters: the first 200 are applied, and the rest is said not to be.
    const long = await firecrawlPost("/v2/map", { url: root, limit: 10, search: `article ${"x".repeat(300)}` });
    expect(long.status).toBe(200);
    expect(long.body.warning).toBe("Quarry accepted but did not apply: search past its first 200 characters.");
    // In range: nothing clamped and no warning.
    const plain = await firecrawlPost("/v2/map", { url: root, limit: 10 });
    expect({ clamped: plain.body.quarry!.clamped, warning: plain.body.warning }).toEqual({ clamped: [], warning: undefined });
    // Through the clients: the same answers they always read.
    const started = await v2(h.keys.solo).startCrawl(lone, { limit: 20_000 });
    expect(Object.keys(started).sort()).toEqual(["id", "url"]);
    const links = await v2(h.keys.solo).map(root, { limit: 6000 });
    expect(links.links.length).toBe(PAGES + 1);
    const doc = await v2(h.keys.solo).scrape(`${h.site.url}/article`, { timeout: 90_000 });
    expect(doc.markdown).toContain("Log-structured merge trees");
    expect(doc.warning).toBe("Quarry applied timeout 60000 instead of 90000: Quarry gives a page at most 60000 ms.");
  }, 60_000);

  it("a crawl that gives no limit or depth reads as Firecrawl's defaults do (10000 pages, no depth bound), not native's 100 pages 3 links deep", async () => {
    for (let i = 0; i < 6; i++) h.site.route(`/chain/${slug(i)}`, send("text/html; charset=utf-8", LONE.replace("</article>", `<a href="/chain/${slug(i + 1)}">next</a></article>`)));
    h.site.route(`/chain/${slug(6)}`, send("text/html; charset=utf-8", LONE));
    const chain = await v2(h.keys.solo).crawl(`${h.site.url}/chain/${slug(0)}`, { pollInterval: 1 });
    expect(chain.data.map((d) => d.metadata?.sourceURL).sort()).toEqual(Array.from({ length: 7 }, (_, i) => `${h.site.url}/chain/${slug(i)}`));
    const site = await v2(h.keys.solo).crawl(root, { pollInterval: 1 });
    expect(new Set(site.data.map((d) => d.metadata?.sourceURL)).size).toBe(PAGES + 1);
  }, 120_000);

  it("a map that gives no limit lists up to Firecrawl's default 5000, not native's 100", async () => {
    const res = await v2(h.keys.solo).map(root);
    expect(res.links.length).toBe(PAGES + 1);
  }, 30_000);
});

describe("Firecrawl: a URL without a scheme", () => {
  it("gets http:// as Firecrawl gives it, on scrape, map, crawl and batch scrape (v2 and v1)", async () => {
    const doc = await v2(h.keys.solo).scrape(`${bare}/article`, { formats: ["markdown"] });
    expect(doc.metadata?.sourceURL).toBe(`${h.site.url}/article`);
    expect(doc.markdown).toContain("Log-structured merge trees");
    const map = await v2(h.keys.solo).map(`${bare}/site/`, { limit: 5 });
    expect(map.links.length).toBe(5);
    const crawl = await v2(h.keys.solo).crawl(`${bare}/lone/`, { limit: 1, pollInterval: 1 });
    expect(crawl.data.map((d) => d.metadata?.sourceURL)).toEqual([`${h.site.url}/lone/`]);
    const batch = await v2(h.keys.solo).batchScrape([`${bare}/lone/`, `${h.site.url}/article`], { pollInterval: 1 });
    expect(batch.data.map((d) => d.metadata?.sourceURL).sort()).toEqual([`${h.site.url}/article`, `${h.site.url}/lone/`]);
    const old = await v1(h.keys.solo).scrapeUrl(`${bare}/article`, { formats: ["markdown"] });
    if (!old.success) throw new Error("v1 scrape failed");
    expect(old.markdown).toContain("Log-structured merge trees");
  }, 60_000);

  it("then meets the usual guards: localhost stays refused as a private address; native routes still refuse it", async () => {
    const err = await errorOf(v2(h.keys.solo).scrape("localhost:3000/admin"));
    expect((err as SdkError).status).toBe(403);
    expect(err.message).toBe("Quarry does not fetch this URL: its host does not resolve to a public address. Operators can allow private hosts with QUARRY_EGRESS_ALLOW.");
    // Other schemes stay refused for their scheme, not read as a host.
    for (const url of ["javascript:alert(1)", "mailto:someone@example.org", "file:/etc/passwd"]) {
      const res = await firecrawlPost("/v2/scrape", { url });
      expect({ status: res.status, error: res.body.error }, url).toEqual({ status: 400, error: expect.stringMatching(/^url: Quarry fetches only http and https URLs; "[a-z]+:" is not allowed\.$/) });
    }
    const native = await fetch(`${h.url}/v1/scrape`, { method: "POST", headers: { authorization: `Bearer ${h.keys.solo}`, "content-type": "application/json" }, body: JSON.stringify({ url: `${bare}/article` }) });
    expect(native.status).toBe(400);
  }, 30_000);
});

describe("Tavily: the documented defaults", () => {
  it("a map that gives no limit lists Tavily's default 50 URLs, not native's 100", async () => {
    const res = await tvly(h.keys.solo).map(root);
    expect(res.results.length).toBe(50);
    const some = await tvly(h.keys.solo).map(root, { limit: 70 });
    expect(some.results.length).toBe(70);
  }, 60_000);

  it("a map that gives no timeout waits as Tavily's default 150 s does (read for up to Quarry's 60 s), not native's 15 s", async () => {
    h.site.route("/late/", (req, res) => void setTimeout(() => send("text/html; charset=utf-8", `<html><body><a href="/late/one">one</a><a href="/late/two">two</a></body></html>`)(req, res), 16_000));
    const res = await tvly(h.keys.solo).map(`${h.site.url}/late/`);
    expect(res.results.sort()).toEqual([`${h.site.url}/late/`, `${h.site.url}/late/one`, `${h.site.url}/late/two`]);
  }, 60_000);
});
