/** POST /v1/map against a real local site: sitemaps (index, gzipped, robots.txt), page links, metering. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { siteResolver, startTestSite, type TestSite } from "../helpers/test-site.ts";

let site: TestSite;
let t: TestApp;
let key: string;

beforeAll(async () => {
  site = await startTestSite();
  const pages = createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]), resolver: siteResolver });
  t = await makeApp({ storage: "sqlite", pages });
  t.clock.now = () => Date.now();
  key = (await t.key("acme", ["scrape"])).secret;
});
afterAll(async () => {
  await t?.close();
  await site?.close();
});

const map = (json: unknown, k = key) => t.request("/v1/map", { method: "POST", key: k, json });

describe("POST /v1/map", () => {
  it("lists URLs from the sitemap index, the gzipped sitemap and the page's links", async () => {
    const res = await map({ url: `${site.url}/`, limit: 500 });
    expect(res.status).toBe(200);
    const body = await res.json();
    const urls: string[] = body.links.map((l: { url: string }) => l.url);
    // From the plain sitemap the index names, and from the gzipped one: pages no link points to.
    expect(urls).toContain(`${site.url}/docs/sitemap-only`);
    expect(urls).toContain(`${site.url}/blog/archive-only`);
    expect(body.meta.sitemaps).toEqual(expect.arrayContaining([`${site.url}/sitemap-index.xml`, `${site.url}/sitemap-docs.xml`, `${site.url}/sitemap-blog.xml.gz`]));
    // From the page: links with their text as title; fragments and tracking parameters folded.
    expect(body.links).toContainEqual({ url: `${site.url}/about`, title: "/about" });
    expect(urls.filter((u) => u.startsWith(`${site.url}/about`))).toEqual([`${site.url}/about`]);
    // Only the site itself: no other host, subdomain, private address or mailto.
    expect(urls.every((u) => u.startsWith(`${site.url}/`))).toBe(true);
    expect(new Set(urls).size).toBe(urls.length);
    expect(body.meta.results_count).toBe(urls.length);
    expect(body.meta.from_sitemaps).toBeGreaterThan(0);
    expect(body.meta.from_page).toBeGreaterThan(0);
  });

  it("follows include_subdomains, search, limit and the sitemap modes", async () => {
    const sub = await (await map({ url: `${site.url}/`, include_subdomains: true })).json();
    expect(sub.links.map((l: { url: string }) => l.url)).toContain(`http://docs.site.test:${site.port}/`);
    const only = await (await map({ url: `${site.url}/`, sitemap: "only", limit: 500 })).json();
    expect(only.meta.from_page).toBe(0);
    expect(only.links.map((l: { url: string }) => l.url)).toContain(`${site.url}/blog/archive-only`);
    expect(only.links.map((l: { url: string }) => l.url)).not.toContain(`${site.url}/contact`);
    const skip = await (await map({ url: `${site.url}/`, sitemap: "skip", limit: 500 })).json();
    expect(skip.meta.sitemaps).toEqual([]);
    expect(skip.links.map((l: { url: string }) => l.url)).not.toContain(`${site.url}/docs/sitemap-only`);
    const searched = await (await map({ url: `${site.url}/`, search: "blog", limit: 500 })).json();
    expect(searched.links.length).toBeGreaterThan(2);
    expect(searched.links.every((l: { url: string; title: string | null }) => `${l.url} ${l.title}`.toLowerCase().includes("blog"))).toBe(true);
    const limited = await (await map({ url: `${site.url}/`, limit: 3 })).json();
    expect(limited.links).toHaveLength(3);
  });

  it("sends the honest user agent and passes every fetch through the egress guard", async () => {
    expect(site.hits.filter((h) => h.path === "/robots.txt").every((h) => /Quarry/i.test(h.ua))).toBe(true);
    const res = await map({ url: "http://10.0.0.1/" });
    expect(res.status).toBe(422);
    expect((await res.json()).error.code).toBe("url_not_allowed");
  });

  it("costs one crawl unit per request, and a refused one nothing", async () => {
    const k = (await t.key("meter", ["scrape"])).secret;
    await map({ url: `${site.url}/`, sitemap: "skip" }, k);
    await map({ url: "http://10.0.0.1/" }, k);
    await map({ url: "ftp://x" }, k);
    const usage = await (await t.request("/v1/usage", { key: k })).json();
    expect(usage.used).toBe(1);
    expect(usage.endpoints.crawl).toBe(1);
  });

  it("says in one clean sentence why there is nothing to map", async () => {
    const res = await map({ url: "http://127.0.0.1:1/" });
    expect(res.status).toBe(502);
    const message: string = (await res.json()).error.message;
    expect(message).toMatch(/^Nothing to map: .*refused the connection, and the site has no readable sitemap\.$/);
    expect(message).not.toMatch(/[.!?],/);
  });

  it("refuses bad bodies with the field named", async () => {
    const res = await map({ url: `${site.url}/`, limit: 0, extra: 1 });
    expect(res.status).toBe(400);
    const fields = (await res.json()).error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(["limit", "extra"]));
  });
});
