/**
 * Map, crawl and batch scrape through the real clients, against a real server process: the
 * Firecrawl v2 client (map, crawl followed across `next` slices, errors, cancel, batch), the
 * Tavily client (map, crawl) and the MCP tools; refusals as each client's own errors; crawl
 * units counted as the native jobs count them. The site: 130 linked articles on 127.0.0.1.
 */
import Firecrawl, { FirecrawlAppV1, SdkError } from "@mendable/firecrawl-js";
import { tavily } from "@tavily/core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "../helpers/page-server.ts";
import { errorOf, startHarness, type Harness } from "./harness.ts";

const PAGES = 130;
let h: Harness;
let root: string;
const v2 = (apiKey: string) => new Firecrawl({ apiKey, apiUrl: `${h.url}/compat/firecrawl`, maxRetries: 1 });
const tvly = (apiKey: string) => tavily({ apiKey, apiBaseURL: `${h.url}/compat/tavily` });
/** Path names without digits: the crawler caps URLs of one numbered shape (a trap guard). */
const slug = (i: number): string => (i < 26 ? String.fromCharCode(97 + i) : slug(Math.floor(i / 26) - 1) + String.fromCharCode(97 + (i % 26)));
const page = (i: number) => `/site/p/${slug(i)}`;
const article = (i: number) => `<html><head><title>Article ${i}</title></head><body><article><h1>Article ${i}</h1><p>Article number ${i} explains one more detail of log-structured merge trees and their compaction, in a paragraph long enough to be the page's main content.</p></article></body></html>`;

beforeAll(async () => {
  h = await startHarness();
  root = `${h.site.url}/site/`;
  const links = Array.from({ length: PAGES }, (_, i) => `<li><a href="${page(i + 1)}">Article ${i + 1}</a></li>`).join("");
  h.site.route("/site/", send("text/html; charset=utf-8", `<html><head><title>The site</title></head><body><main><h1>All articles</h1><ul>${links}</ul><p><a href="/site/gone">A page that is gone</a></p></main></body></html>`));
  for (let i = 1; i <= PAGES; i++) h.site.route(page(i), send("text/html; charset=utf-8", article(i)));
  h.site.route("/robots.txt", send("text/plain", "User-agent: *\nAllow: /\n"));
  await h.exhaust();
}, 90_000);
afterAll(async () => h?.close());

describe("Firecrawl v2 client: map, crawl, batch", () => {
  it("map lists the site's URLs with titles", async () => {
    const res = await v2(h.keys.full).map(root, { limit: 500 });
    const urls = res.links.map((l) => l.url);
    expect(urls).toContain(`${h.site.url}${page(1)}`);
    expect(urls).toContain(`${h.site.url}${page(PAGES)}`);
    expect(urls.length).toBeGreaterThanOrEqual(PAGES);
  }, 60_000);

  it("crawl: the client waits, then follows the absolute next links across slices to every page", async () => {
    const job = await v2(h.keys.full).crawl(root, { limit: 500, maxDiscoveryDepth: 1, scrapeOptions: { formats: ["markdown"] }, pollInterval: 1 });
    expect(job.status).toBe("completed");
    const urls = job.data.map((d) => d.metadata?.sourceURL);
    expect(new Set(urls).size).toBe(PAGES + 1); // the index and every article, each once
    const one = job.data.find((d) => d.metadata?.sourceURL === `${h.site.url}${page(7)}`)!;
    expect(one.markdown).toContain("Article number 7 explains");
    expect(one.metadata?.statusCode).toBe(200);
    // a slice as the API answers it: at most 100 pages and an absolute next of this API
    const started = await v2(h.keys.full).startCrawl(root, { limit: 500, maxDiscoveryDepth: 1 });
    expect(started.url).toBe(`${h.url}/compat/firecrawl/v2/crawl/${started.id}`);
    let slice: { status: string; next?: string | null; data: unknown[] } = { status: "scraping", next: null, data: [] };
    for (let i = 0; i < 120 && slice.status !== "completed"; i++) {
      slice = await v2(h.keys.full).getCrawlStatus(started.id, { autoPaginate: false });
      if (slice.status !== "completed") await new Promise((r) => setTimeout(r, 500));
    }
    expect(slice.data.length).toBe(100);
    expect(slice.next).toBe(`${h.url}/compat/firecrawl/v2/crawl/${started.id}?skip=100`);
    const errors = await v2(h.keys.full).getCrawlErrors(started.id);
    expect(errors.errors.map((e) => e.url)).toContain(`${h.site.url}/site/gone`);
  }, 120_000);

  it("cancel stops a crawl; batch scrape reads a list of URLs", async () => {
    const started = await v2(h.keys.full).startCrawl(root, { limit: 500 });
    expect(await v2(h.keys.full).cancelCrawl(started.id)).toBe(true);
    const urls = [1, 2, 3].map((i) => `${h.site.url}${page(i)}`);
    const batch = await v2(h.keys.full).batchScrape(urls, { options: { formats: ["markdown", "links"] }, pollInterval: 1 });
    expect(batch.status).toBe("completed");
    expect(batch.data.map((d) => d.metadata?.sourceURL).sort()).toEqual(urls.sort());
    for (const d of batch.data) expect(d.markdown).toMatch(/Article number \d explains/);
  }, 60_000);

  it("batch scrape and crawl pass waitFor, actions and the screenshot format to the server's browser", async () => {
    const hidden = "The archive opens only for readers who ask, and the ledger inside lists every ship.";
    h.site.route("/reveal/", send("text/html; charset=utf-8", `<html><head><title>Reveal</title></head><body><main><h1>Reveal</h1><button id="more">More</button><article id="full" hidden><p>${hidden}</p></article></main><script>document.getElementById("more").onclick = () => { document.getElementById("full").hidden = false; };</script></body></html>`));
    const url = `${h.site.url}/reveal/`;
    const batch = await v2(h.keys.full).batchScrape([url], {
      options: { formats: ["markdown", "screenshot"], waitFor: 100, actions: [{ type: "click", selector: "#more" }] }, pollInterval: 1,
    });
    expect(batch.status).toBe("completed");
    expect(batch.data[0]!.markdown).toContain("the ledger inside lists every ship");
    expect(batch.data[0]!.screenshot).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
    const crawl = await v2(h.keys.full).crawl(url, { limit: 1, scrapeOptions: { formats: ["markdown", "screenshot"], actions: [{ type: "click", selector: "#more" }] }, pollInterval: 1 });
    expect(crawl.data[0]!.markdown).toContain("the ledger inside lists every ship");
    expect(crawl.data[0]!.screenshot).toMatch(/^data:image\/png;base64,/);
  }, 90_000);

  it("refusals are SdkErrors: a missing scope 403, an exhausted quota 402, another account's job 404", async () => {
    const scope = await errorOf(v2(h.keys.narrow).startCrawl(root, {}));
    expect((scope as SdkError).status).toBe(403);
    const quota = await errorOf(v2(h.keys.tight).map(root));
    expect((quota as SdkError).status).toBe(402);
    const mine = await v2(h.keys.full).startCrawl(root, { limit: 2 });
    const theirs = await errorOf(v2(h.keys.twin).getCrawlStatus(mine.id));
    expect((theirs as SdkError).status).toBe(404);
  }, 60_000);

  it("getActiveCrawls is a 404 saying Quarry does not list them, not that none is active", async () => {
    const err = await errorOf(v2(h.keys.full).getActiveCrawls());
    expect((err as SdkError).status).toBe(404);
    expect(err.message).toBe("Quarry does not list active crawls (GET /compat/firecrawl/v2/crawl/active); read each crawl by the id its start answered.");
  }, 30_000);

  it("a batch whose every URL ignoreInvalidURLs drops says so, not 'urls must not be empty'", async () => {
    const err = await errorOf(v2(h.keys.full).startBatchScrape(["not a url", "ftp://x/y"], { ignoreInvalidURLs: true }));
    expect((err as SdkError).status).toBe(400);
    expect(err.message).toBe("urls: none is a valid http(s) URL, so there is nothing to scrape (ignoreInvalidURLs dropped all 2).");
  }, 30_000);

  it("a crawl's webhook with a secret is signed; fields Quarry does not apply are named", async () => {
    const got: Array<{ signature: string | undefined; body: string }> = [];
    h.site.route("/hook", (req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        got.push({ signature: req.headers["x-quarry-signature"] as string | undefined, body });
        res.writeHead(200).end();
      });
    });
    const started = await v2(h.keys.full).startCrawl(`${h.site.url}${page(5)}`, { limit: 1, webhook: { url: `${h.site.url}/hook`, secret: "s3cret", events: ["completed"], custom: 1 } as never });
    expect(started.id).toMatch(/^crawl_/);
    for (let i = 0; i < 100 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0]!.body)).toMatchObject({ type: "crawl.completed", id: started.id });
    expect(got[0]!.signature).toBe(`sha256=${createHmac("sha256", "s3cret").update(got[0]!.body).digest("hex")}`);
    const raw = await (await fetch(`${h.url}/compat/firecrawl/v2/crawl`, { method: "POST", headers: { authorization: `Bearer ${h.keys.full}`, "content-type": "application/json" }, body: JSON.stringify({ url: `${h.site.url}${page(6)}`, limit: 1, webhook: { url: `${h.site.url}/hook`, custom: 1 } }) })).json();
    expect(raw.quarry.ignored.map((i: { option: string }) => i.option)).toEqual(["webhook.custom"]);
  }, 30_000);

  it("a path pattern Quarry cannot run is a 400 naming the client's own field", async () => {
    const include = await errorOf(v2(h.keys.full).startCrawl(root, { includePaths: ["^/site/", "(?=p)"] }));
    expect((include as SdkError).status).toBe(400);
    expect(include.message).toMatch(/^includePaths\.1: each of includePaths must be a regular expression without lookaround/);
    const exclude = await errorOf(v2(h.keys.full).startCrawl(root, { excludePaths: ["(a)\\1"] }));
    expect(exclude.message).toMatch(/^excludePaths\.0: each of excludePaths must be/);
  }, 30_000);
});

describe("a URL with another scheme than http(s), through each service's client", () => {
  const said = (field: string, scheme: string) => `${field}: Quarry fetches only http and https URLs; "${scheme}" is not allowed.`;

  it("Firecrawl (v2 and v1) answers 400 naming the field, as Firecrawl does for an unsupported protocol, and counts nothing", async () => {
    const before = await h.usage(h.keys.solo);
    const client = v2(h.keys.solo);
    // Each call made when its turn comes: made all at once, a refusal that arrived before the loop
    // reached its promise was an unhandled rejection.
    for (const [call, field] of [
      [() => client.scrape("ftp://example.org/file"), "url"],
      [() => client.map("file:///etc/passwd"), "url"],
      [() => client.startCrawl("javascript:alert(1)", { limit: 2 }), "url"],
      [() => client.startBatchScrape([root, "data:text/html,hi"], { ignoreInvalidURLs: false }), "urls.1"],
      [() => client.startCrawl(root, { limit: 2, webhook: "ftp://hooks.example/x" }), "webhook.url"],
    ] as const) {
      const err = await errorOf(call());
      expect({ status: (err as SdkError).status, message: err.message }, field).toEqual({ status: 400, message: expect.stringMatching(new RegExp(`^${field.replace(".", "\\.")}: Quarry fetches only http and https URLs; "[a-z]+:" is not allowed\\.$`)) });
    }
    const v1 = new FirecrawlAppV1({ apiKey: h.keys.solo, apiUrl: `${h.url}/compat/firecrawl` });
    const scrape = await errorOf(v1.scrapeUrl("ftp://example.org/file", {}));
    expect((scrape as Error & { statusCode: number }).statusCode).toBe(400);
    expect(scrape.message).toContain(said("url", "ftp:"));
    // v1 refuses a batch with such an entry unless told to drop it.
    const batch = await errorOf(v1.asyncBatchScrapeUrls([root, "ftp://example.org/file"], {}));
    expect((batch as Error & { statusCode: number }).statusCode).toBe(400);
    expect(batch.message).toContain(said("urls.1", "ftp:"));
    const after = await h.usage(h.keys.solo);
    expect(after.used).toBe(before.used);
  }, 60_000);

  it("Firecrawl v2 drops such a batch entry by default and lists it in invalidURLs, as Firecrawl's v2 does", async () => {
    const res = await v2(h.keys.full).startBatchScrape([`${h.site.url}${page(3)}`, "ftp://example.org/file"], {});
    expect(res.invalidURLs).toEqual(["ftp://example.org/file"]);
    await v2(h.keys.full).cancelBatchScrape(res.id).catch(() => {});
  }, 30_000);

  it("Tavily map and crawl answer 400 in Tavily's shape, naming the field, and count nothing", async () => {
    const before = await h.usage(h.keys.solo);
    for (const path of ["/compat/tavily/map", "/compat/tavily/crawl"]) {
      const res = await fetch(h.url + path, { method: "POST", headers: { authorization: `Bearer ${h.keys.solo}`, "content-type": "application/json" }, body: JSON.stringify({ url: "ftp://example.org/file" }) });
      expect(res.status, path).toBe(400);
      expect(((await res.json()) as { detail: { error: string } }).detail.error, path).toBe(said("url", "ftp:"));
    }
    const err = await errorOf(tvly(h.keys.solo).map("file:///etc/passwd"));
    expect(err.message).toBe(said("url", "file:"));
    // extract answers each URL it cannot read as a failed result, which names the URL itself.
    const extract = await tvly(h.keys.solo).extract(["file:///etc/passwd"]);
    expect(extract.failedResults).toEqual([{ url: "file:///etc/passwd", error: said("url", "file:").slice("url: ".length) }]);
    expect((await h.usage(h.keys.solo)).used).toBe(before.used);
  }, 30_000);
});

describe("Firecrawl v1 client: map and crawl", () => {
  it("mapUrl lists URLs; a crawl read with getAllData follows next to every page", async () => {
    const app = new FirecrawlAppV1({ apiKey: h.keys.full, apiUrl: `${h.url}/compat/firecrawl` });
    const map = await app.mapUrl(root, { limit: 500 });
    if (!map.success) throw new Error("map failed");
    expect(map.links).toContain(`${h.site.url}${page(PAGES)}`);
    const started = await app.asyncCrawlUrl(root, { limit: 500, maxDepth: 1 });
    if (!started.success) throw new Error("crawl failed");
    let status = await app.checkCrawlStatus(started.id, true);
    for (let i = 0; i < 120 && status.success && status.status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 500));
      status = await app.checkCrawlStatus(started.id, true);
    }
    if (!status.success) throw new Error("status failed");
    expect(status.status).toBe("completed");
    expect(new Set(status.data.map((d) => d.metadata?.sourceURL)).size).toBe(PAGES + 1);
  }, 120_000);
});

describe("Firecrawl v1 client: batch scrape and errors", () => {
  it("batchScrapeUrls waits for the batch (it polls /v1/crawl/{id}) and returns its pages", async () => {
    const app = new FirecrawlAppV1({ apiKey: h.keys.full, apiUrl: `${h.url}/compat/firecrawl` });
    const res = await app.batchScrapeUrls([`${h.site.url}${page(1)}`, `${h.site.url}${page(2)}`], { formats: ["markdown"] }, 1);
    if (!res.success) throw new Error("batch failed");
    expect(res.status).toBe("completed");
    expect(res.data.map((d) => d.metadata?.sourceURL).sort()).toEqual([`${h.site.url}${page(1)}`, `${h.site.url}${page(2)}`]);
    expect(res.data[0].markdown).toMatch(/log-structured merge trees/);
  }, 60_000);

  /** Asks the SDK for a job's status every 250 ms (at most 60 times) until it failed or completed. */
  async function untilCompleted(check: () => Promise<{ success: boolean; status?: string }>): Promise<void> {
    for (let i = 0, s = await check(); i < 60 && s.success && s.status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 250));
      s = await check();
    }
  }

  it("checkCrawlErrors and checkBatchScrapeErrors (both sent as DELETE) list the failed pages", async () => {
    const app = new FirecrawlAppV1({ apiKey: h.keys.full, apiUrl: `${h.url}/compat/firecrawl` });
    const gone = `${h.site.url}/site/gone`;
    const batch = await app.asyncBatchScrapeUrls([`${h.site.url}${page(3)}`, gone], { formats: ["markdown"] });
    if (!batch.success || !batch.id) throw new Error("batch failed");
    await untilCompleted(() => app.checkBatchScrapeStatus(batch.id!));
    const batchErrors = await app.checkBatchScrapeErrors(batch.id);
    expect("errors" in batchErrors && batchErrors.errors.map((e) => e.url)).toEqual([gone]);
    const crawl = await app.asyncCrawlUrl(root, { limit: 3, maxDepth: 1, includePaths: ["^/site/(gone)?$"] });
    if (!crawl.success || !crawl.id) throw new Error("crawl failed");
    await untilCompleted(() => app.checkCrawlStatus(crawl.id!));
    const crawlErrors = await app.checkCrawlErrors(crawl.id);
    expect("errors" in crawlErrors && crawlErrors.errors.map((e) => e.url)).toEqual([gone]);
    // A read: the job is still there, completed, afterwards.
    expect(await app.checkCrawlStatus(crawl.id)).toMatchObject({ success: true, status: "completed" });
  }, 90_000);
});

describe("Tavily client: a crawl that outlasts its timeout", () => {
  it("answers what it read before the client's own timeout (the same number) runs out", async () => {
    // A chain of pages that each take a second: far more than 10 s of work.
    for (let i = 0; i < 40; i++) {
      h.site.route(`/slow/${slug(i)}`, (_req, res) => {
        setTimeout(() => send("text/html; charset=utf-8", `<html><head><title>Slow ${i}</title></head><body><article><h1>Slow ${i}</h1><p>Slow page ${i} is a page long enough to be read as the main content of the page.</p><a href="/slow/${slug(i + 1)}">next</a></article></body></html>`)(_req, res), 1000);
      });
    }
    const t0 = Date.now();
    const res = await tvly(h.keys.full).crawl(`${h.site.url}/slow/${slug(0)}`, { limit: 40, maxDepth: 5, timeout: 10 });
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(res.results.length).toBeGreaterThan(0);
    expect(res.results[0].url).toBe(`${h.site.url}/slow/${slug(0)}`);
    // Under Tavily's 10 s too: the client waits only that long whatever the server would.
    const short = Date.now();
    const quick = await tvly(h.keys.full).crawl(`${h.site.url}/slow/${slug(20)}`, { limit: 40, maxDepth: 5, timeout: 5 });
    expect(Date.now() - short).toBeLessThan(5000);
    expect(quick.results.map((r) => r.url)).toContain(`${h.site.url}/slow/${slug(20)}`);
  }, 60_000);
});

describe("Tavily client: extract and map within the client's own timeout", () => {
  it("extract shares `timeout` across its URLs: the pages read in time, the rest failed, before the client gives up", async () => {
    for (let i = 0; i < 12; i++) {
      h.site.route(`/slowpage/${slug(i)}`, (req, res) => {
        setTimeout(() => send("text/html; charset=utf-8", `<html><head><title>Slow page ${i}</title></head><body><article><h1>Slow page ${i}</h1><p>Slow page ${i} takes a second and a half to answer, and has a paragraph long enough to be its main content.</p></article></body></html>`)(req, res), 1500);
      });
    }
    const urls = Array.from({ length: 12 }, (_, i) => `${h.site.url}/slowpage/${slug(i)}`);
    const t0 = Date.now();
    const res = await tvly(h.keys.full).extract(urls, { timeout: 4 });
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(res.results.length).toBeGreaterThan(0);
    expect(res.results.length + res.failedResults.length).toBe(12);
    expect(res.failedResults.length).toBeGreaterThan(0);
    for (const f of res.failedResults) expect(f.error).toMatch(/timeout|took longer/);
  }, 30_000);

  it("extract gives a slow page one place, not a batch: the quick pages after it are still read in time", async () => {
    const html = (t: string) => `<html><head><title>${t}</title></head><body><article><h1>${t}</h1><p>${t} answers and has a paragraph long enough to be its main content.</p></article></body></html>`;
    h.site.route("/pool/slow", (req, res) => void setTimeout(() => send("text/html; charset=utf-8", html("The slow page"))(req, res), 3800));
    for (let i = 0; i < 7; i++) h.site.route(`/pool/quick-${slug(i)}`, (req, res) => void setTimeout(() => send("text/html; charset=utf-8", html(`Quick page ${i}`))(req, res), 300));
    const quick = Array.from({ length: 7 }, (_, i) => `${h.site.url}/pool/quick-${slug(i)}`);
    // In batches of four the last three would start only after the slow page (at ~4.1 s), with under a second left.
    const urls = [quick[0]!, `${h.site.url}/pool/slow`, ...quick.slice(1)];
    const t0 = Date.now();
    const res = await tvly(h.keys.full).extract(urls, { timeout: 6 });
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(res.failedResults).toEqual([]);
    expect(res.results.map((r) => r.url).sort()).toEqual([...urls].sort());
  }, 30_000);

  it("map of a page that does not answer in time says so, before the client's own timeout error", async () => {
    h.site.route("/hang/", (req, res) => void setTimeout(() => send("text/html; charset=utf-8", "<html><body>late</body></html>")(req, res), 8000));
    const err = await errorOf(tvly(h.keys.full).map(`${h.site.url}/hang/`, { timeout: 3 }));
    expect(err.message).toMatch(/^Nothing to map/);
  }, 30_000);
});

describe("Tavily client: map and crawl", () => {
  it("map lists URLs; crawl answers the pages' content when the job is done", async () => {
    const map = await tvly(h.keys.full).map(root, { limit: 500, selectPaths: ["^/site/p/b[a-z]$"] });
    expect(map.baseUrl).toBe(root);
    expect(map.results.sort()).toEqual(Array.from({ length: 26 }, (_, i) => `${h.site.url}${page(52 + i)}`).sort());
    const crawl = await tvly(h.keys.full).crawl(root, { maxDepth: 1, limit: 12, selectPaths: ["^/site/(p/[a-z]+)?$"] });
    expect(crawl.results.length).toBe(12);
    for (const r of crawl.results.filter((x) => x.url.includes("/p/"))) expect(r.rawContent).toMatch(/Article number \d+ explains/);
    const refused = await errorOf(tvly(h.keys.narrow).crawl(root, { limit: 2 }));
    expect(refused.message).toContain('"scrape" scope');
  }, 90_000);
});

describe("Tavily client: map and crawl take Tavily's documented ranges", () => {
  const tavilyPost = async (path: string, body: Record<string, unknown>) => {
    const res = await fetch(`${h.url}/compat/tavily${path}`, { method: "POST", headers: { authorization: `Bearer ${h.keys.solo}`, "content-type": "application/json" }, body: JSON.stringify({ url: root, ...body }) });
    return { status: res.status, body: (await res.json()) as { detail?: { error: string }; quarry?: { clamped: unknown[] } } };
  };

  it("a value outside them is a 400 in Tavily's shape naming the field, as Tavily answers it, and counts nothing", async () => {
    const before = await h.usage(h.keys.solo);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ max_depth: 0 }, "max_depth: max_depth must be at least 1"],
      [{ max_depth: 6 }, "max_depth: max_depth must be at most 5"],
      [{ max_depth: 2.5 }, "max_depth: max_depth must be a whole number between 1 and 5"],
      [{ max_breadth: 0 }, "max_breadth: max_breadth must be at least 1"],
      [{ max_breadth: 501 }, "max_breadth: max_breadth must be at most 500"],
      [{ limit: 0 }, "limit: limit must be at least 1"],
      [{ limit: 1.5 }, "limit: limit must be a whole number at least 1"],
      [{ timeout: 0 }, "timeout: timeout must be more than 0 seconds"],
      [{ timeout: 151 }, "timeout: timeout must be at most 150 seconds"],
    ];
    for (const path of ["/map", "/crawl"]) {
      for (const [body, error] of cases) {
        const res = await tavilyPost(path, body);
        expect({ status: res.status, error: res.body.detail?.error }, `${path} ${JSON.stringify(body)}`).toEqual({ status: 400, error });
      }
    }
    // Through the client: its own error, with the same words.
    expect((await errorOf(tvly(h.keys.solo).crawl(root, { maxDepth: 6 }))).message).toBe("max_depth: max_depth must be at most 5");
    expect((await h.usage(h.keys.solo)).used).toBe(before.used);
  }, 60_000);

  it("a value Tavily takes but Quarry cannot honour is applied at Quarry's maximum and said in quarry.clamped", async () => {
    h.site.route("/lone/", send("text/html; charset=utf-8", "<html><head><title>Alone</title></head><body><article><h1>Alone</h1><p>A page with no links at all, long enough to be read as the main content of the page.</p></article></body></html>"));
    const map = await tavilyPost("/map", { limit: 6000, timeout: 100 });
    expect(map.status).toBe(200);
    expect(map.body.quarry!.clamped).toEqual([
      { option: "limit", requested: 6000, applied: 5000, reason: "Quarry's map lists at most 5000 URLs" },
      { option: "timeout", requested: 100, applied: 60, reason: "Quarry's map reads for at most 60 s, and answers with what it found by then" },
    ]);
    const crawl = await tavilyPost("/crawl", { url: `${h.site.url}/lone/`, limit: 20000, max_depth: 5 });
    expect(crawl.status).toBe(200);
    expect(crawl.body.quarry!.clamped).toEqual([{ option: "limit", requested: 20000, applied: 10000, reason: "Quarry crawls at most 10000 pages a job" }]);
    // In range: nothing clamped, and the client's answer is Tavily's shape either way.
    expect((await tavilyPost("/map", { limit: 10, max_depth: 5, max_breadth: 500 })).body.quarry!.clamped).toEqual([]);
    const viaClient = await tvly(h.keys.solo).map(root, { limit: 6000 });
    expect(Object.keys(viaClient).sort()).toEqual(["baseUrl", "requestId", "responseTime", "results"]);
  }, 60_000);
});

describe("MCP: the site-level tools", () => {
  it("map, crawl, crawl_status with skip, batch_scrape and batch_scrape_cancel", async () => {
    const client = new Client({ name: "jobs-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${h.keys.full}` } } }));
    const map = (await client.callTool({ name: "map", arguments: { url: root, limit: 20 } })) as CallToolResult;
    expect((map.structuredContent as { links: unknown[] }).links.length).toBe(20);
    const started = (await client.callTool({ name: "crawl", arguments: { url: root, limit: 5, max_depth: 1 } })) as CallToolResult;
    const id = (started.structuredContent as { id: string }).id;
    expect(id).toMatch(/^crawl_/);
    // The link the tool gives is this server's, one the caller can use.
    const statusUrl = (started.structuredContent as { status_url: string }).status_url;
    expect(statusUrl).toBe(`${h.url}/v1/crawl/${id}`);
    expect((await fetch(statusUrl, { headers: { authorization: `Bearer ${h.keys.full}` } })).status).toBe(200);
    let status: { status: string; data: unknown[] } = { status: "queued", data: [] };
    for (let i = 0; i < 60 && !["completed", "failed", "cancelled"].includes(status.status); i++) {
      status = ((await client.callTool({ name: "crawl_status", arguments: { id } })) as CallToolResult).structuredContent as typeof status;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(status.status).toBe("completed");
    expect(status.data.length).toBe(5);
    const skipped = ((await client.callTool({ name: "crawl_status", arguments: { id, skip: 3 } })) as CallToolResult).structuredContent as typeof status;
    expect(skipped.data.length).toBe(2);
    const batch = (await client.callTool({ name: "batch_scrape", arguments: { urls: [`${h.site.url}${page(1)}`] } })) as CallToolResult;
    expect((batch.structuredContent as { id: string }).id).toMatch(/^batch_/);
    // A batch too long to finish at once is stopped by batch_scrape_cancel, and its status says so.
    const long = (await client.callTool({ name: "batch_scrape", arguments: { urls: Array.from({ length: 100 }, (_, i) => `${h.site.url}${page(i + 1)}`) } })) as CallToolResult;
    const longId = (long.structuredContent as { id: string }).id;
    const cancelled = (await client.callTool({ name: "batch_scrape_cancel", arguments: { id: longId } })) as CallToolResult;
    expect(cancelled.isError, JSON.stringify(cancelled.content)).toBeFalsy();
    expect((cancelled.structuredContent as { status: string }).status).toBe("cancelled");
    const after = ((await client.callTool({ name: "batch_scrape_status", arguments: { id: longId } })) as CallToolResult).structuredContent as typeof status;
    expect(after.status).toBe("cancelled");
    await client.close();
  }, 60_000);
});

describe("usage of site-level work", () => {
  it("counts crawl units exactly as the same native calls", async () => {
    const before = await h.usage(h.keys.solo);
    const twinBefore = await h.usage(h.keys.twin);
    await v2(h.keys.solo).map(root, { limit: 10 });
    await v2(h.keys.solo).crawl(root, { limit: 6, maxDiscoveryDepth: 1, pollInterval: 1 });
    const post = (path: string, body: unknown) => fetch(h.url + path, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${h.keys.twin}` }, body: JSON.stringify(body) }).then((r) => r.json());
    await post("/v1/map", { url: root, limit: 10 });
    const job = await post("/v1/crawl", { url: root, limit: 6, max_depth: 1 });
    for (let i = 0; i < 60; i++) {
      const s = await fetch(`${h.url}/v1/crawl/${job.id}`, { headers: { authorization: `Bearer ${h.keys.twin}` } }).then((r) => r.json());
      if (s.status === "completed") break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const after = await h.usage(h.keys.solo);
    const twinAfter = await h.usage(h.keys.twin);
    expect(after.endpoints.crawl - before.endpoints.crawl).toBe(7); // one map + six pages
    expect(twinAfter.endpoints.crawl - twinBefore.endpoints.crawl).toBe(7);
  }, 90_000);
});
