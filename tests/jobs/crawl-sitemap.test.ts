/**
 * A crawl reads the site's sitemaps (issue #31 item 3): a local site whose home page links to 2
 * guides and whose sitemap index (a plain and a gzipped sitemap) lists 24 pages. `sitemap:
 * "include"` (the default, as Firecrawl's) reads what the sitemaps list beside the links;
 * `"skip"` only follows links; `"only"` reads the sitemaps' pages and follows no link. Sitemap
 * URLs meet the rules links meet: exclude_paths, robots.txt, the crawl's host. The Firecrawl
 * routes map v2's `sitemap` and v1's `ignoreSitemap`. In process on SQLite.
 */
import { createServer, type Server as HttpServer } from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";

type Job = Record<string, any>;
let t: TestApp;
let key: string;
let server: HttpServer;
let base = "";
const hits: string[] = [];

const GUIDES = Array.from({ length: 21 }, (_, i) => `/guide/${i + 1}`);
/** 25 entries: 21 guides, a page robots.txt disallows, a draft the crawl excludes, another host's page, a page that refuses (403). */
const LISTED = [...GUIDES, "/private/plans", "/drafts/next", "http://other.test/elsewhere", "/members"];

const page = (title: string, links: string[]) =>
  `<!doctype html><html><head><title>${title}</title></head><body><nav><a href="/">Home</a> <a href="/about">About</a></nav><main><article><h1>${title}</h1><p>${title} is a page of a small documentation site, with enough words to be read as its main content.</p><p>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</p></article></main></body></html>`;

const urlset = (paths: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths.map((p) => `<url><loc>${p.startsWith("http") ? p : base + p}</loc></url>`).join("")}</urlset>`;

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? "/";
    hits.push(path);
    const send = (type: string, body: string | Buffer) => void res.writeHead(200, { "content-type": type }).end(body);
    if (path === "/robots.txt") return send("text/plain", `User-agent: *\nDisallow: /private/\n\nSitemap: ${base}/sitemap-index.xml\n`);
    if (path === "/sitemap-index.xml") {
      return send("application/xml", `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${base}/sitemap-a.xml</loc></sitemap><sitemap><loc>${base}/sitemap-b.xml.gz</loc></sitemap></sitemapindex>`);
    }
    if (path === "/sitemap-a.xml") return send("application/xml", urlset(LISTED.slice(0, 12)));
    if (path === "/sitemap-b.xml.gz") return send("application/gzip", gzipSync(urlset(LISTED.slice(12))));
    if (path === "/sitemap.xml") return void res.writeHead(404).end();
    if (path === "/") return send("text/html", page("Home", ["/guide/1", "/guide/3"]));
    if (path === "/members") return void res.writeHead(403, { "content-type": "text/html" }).end("<h1>Members only</h1>");
    return send("text/html", page(`Page ${path}`, []));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  t = await makeApp({
    storage: "sqlite",
    pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }),
    env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: '{"free":{"quota":10000,"per_minute":100000}}' },
  });
  key = (await t.key("acme", ["scrape"])).secret;
});
afterAll(async () => {
  await t?.close();
  server?.closeAllConnections();
  server?.close();
});

async function finished(path: string): Promise<Job> {
  // Time-bound rather than a count of polls: on a loaded machine each poll itself takes a while.
  for (const end = Date.now() + 50_000; Date.now() < end; ) {
    const job = await (await t.request(path, { key })).json();
    if (["completed", "failed", "cancelled"].includes(job.status)) return job;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${path} did not end`);
}

async function crawl(body: Record<string, unknown>): Promise<{ job: Job; paths: string[] }> {
  const res = await t.request("/v1/crawl", { method: "POST", key, json: { url: `${base}/`, limit: 30, max_depth: 1, timeout_ms: 3000, exclude_paths: ["^/drafts/"], ...body } });
  const started = await res.json();
  expect(res.status, JSON.stringify(started)).toBe(202);
  const job = await finished(`/v1/crawl/${started.id}`);
  return { job, paths: job.data.filter((p: Job) => !p.error).map((p: Job) => new URL(p.url).pathname).sort() };
}

const sorted = (a: string[]) => [...a].sort();

describe("a crawl and the site's sitemaps", { timeout: 60_000 }, () => {
  it("include (the default): the sitemaps' pages with the links' pages, under the same exclude_paths, robots.txt and host rules", async () => {
    const { job, paths } = await crawl({});
    // A sitemap page that refuses is one failed page, not a refused start page: the crawl goes on.
    expect([job.status, job.stopped_reason]).toEqual(["completed", null]);
    expect(job.failures).toEqual([{ url: `${base}/members`, status_code: 403, error: "http_403" }]);
    expect(paths).toEqual(sorted(["/", "/about", ...GUIDES]));
    // The excluded draft and the other host were never asked for; the disallowed page is reported, not fetched.
    expect(hits).not.toContain("/drafts/next");
    expect(hits).not.toContain("/private/plans");
    expect(job.skipped_urls).toContainEqual({ url: `${base}/private/plans`, reason: "robots_disallowed" });
  });

  it("skip: only what links reach within max_depth", async () => {
    const { paths } = await crawl({ sitemap: "skip" });
    expect(paths).toEqual(sorted(["/", "/about", "/guide/1", "/guide/3"]));
  });

  it("max_depth 0: the start page alone, sitemaps or not", async () => {
    const { paths } = await crawl({ max_depth: 0 });
    expect(paths).toEqual(["/"]);
  });

  it("only: the start page and the sitemaps' pages, no link followed", async () => {
    const { paths } = await crawl({ sitemap: "only" });
    expect(paths).toEqual(sorted(["/", ...GUIDES]));
  });

  it("a bad value is a 400 naming the field", async () => {
    const res = await t.request("/v1/crawl", { method: "POST", key, json: { url: `${base}/`, sitemap: "sometimes" } });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toMatch(/sitemap must be include, skip or only/);
  });

  it("Firecrawl v2's sitemap and v1's ignoreSitemap (include unless told otherwise)", async () => {
    const run = async (version: string, body: Record<string, unknown>) => {
      const started = await (await t.request(`/compat/firecrawl/${version}/crawl`, { method: "POST", key, json: { url: `${base}/`, limit: 30, excludePaths: ["^/drafts/"], ...body } })).json();
      expect(started.success, JSON.stringify(started)).toBe(true);
      expect(started.warning ?? "").not.toMatch(/sitemap/i);
      const job = await finished(`/v1/crawl/${started.id}`);
      return job.data.filter((p: Job) => !p.error).length;
    };
    expect(await run("v2", {})).toBe(23); // "/", "/about" and the 21 guides
    expect(await run("v2", { sitemap: "only" })).toBe(22);
    expect(await run("v2", { sitemap: "skip", maxDiscoveryDepth: 1 })).toBe(4);
    expect(await run("v1", { ignoreSitemap: true, maxDepth: 1 })).toBe(4);
    expect(await run("v1", { maxDepth: 1 })).toBe(23);
  });
});
