/**
 * What the Firecrawl v2 client learns about a job's failures, against a real server process: each
 * failed page's `code` and `error` from getBatchScrapeErrors / getCrawlErrors say what happened
 * (an HTTP status only when the page answered one), robots.txt refusals are in robotsBlocked, and
 * a crawl cut short by the key's quota, which the client's status reads as "completed", says so.
 */
import Firecrawl, { FirecrawlAppV1 } from "@mendable/firecrawl-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "../helpers/page-server.ts";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness;
const v2 = (apiKey: string) => new Firecrawl({ apiKey, apiUrl: `${h.url}/compat/firecrawl`, maxRetries: 1 });
const html = (title: string, links = "") => `<html><head><title>${title}</title></head><body><article><h1>${title}</h1><p>${title} is a page long enough to be read as the main content of the page it is on.</p>${links}</article></body></html>`;

beforeAll(async () => {
  h = await startHarness();
  h.site.route("/robots.txt", send("text/plain", "User-agent: *\nDisallow: /hidden/\n"));
  h.site.route("/f/ok", send("text/html; charset=utf-8", html("Fine")));
  h.site.route("/f/gone", send("text/html; charset=utf-8", html("Gone"), 404));
  h.site.route("/f/broken", send("text/html; charset=utf-8", html("Broken"), 500));
  h.site.route("/f/picture", send("image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0])));
  h.site.route("/f/slow", (req, res) => void setTimeout(() => send("text/html; charset=utf-8", html("Slow"))(req, res), 15_000));
  h.site.route("/f/late", (req, res) => void setTimeout(() => send("text/html; charset=utf-8", html("Late"))(req, res), 300));
  h.site.route("/m/", send("text/html; charset=utf-8", "<h1>down</h1>", 500));
  const urlset = (paths: string[]) => `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths.map((p) => `<url><loc>${h.site.url}${p}</loc></url>`).join("")}</urlset>`;
  h.site.route("/sitemap.xml", (req, res) => send("application/xml", `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${h.site.url}/sitemap-a.xml</loc></sitemap><sitemap><loc>${h.site.url}/sitemap-b.xml</loc></sitemap></sitemapindex>`)(req, res));
  h.site.route("/sitemap-a.xml", (req, res) => send("application/xml", urlset(["/m/one", "/m/two"]))(req, res));
  h.site.route("/sitemap-b.xml", send("text/plain", "down", 503));
  h.site.route("/r/", send("text/html; charset=utf-8", html("Busy", ["a", "b", "c", "d", "e", "f"].map((x) => `<a href="/r/${x}">${x}</a>`).join(""))));
  for (const x of ["a", "b", "c", "d", "e", "f"]) h.site.route(`/r/${x}`, send("text/html; charset=utf-8", "slow down", 429));
  h.site.route("/hidden/page", send("text/html; charset=utf-8", html("Hidden")));
  const chain = (i: number) => `<a href="/q/${"abcdef"[i + 1]}">next</a>`;
  for (let i = 0; i < 5; i++) h.site.route(`/q/${"abcdef"[i]}`, send("text/html; charset=utf-8", html(`Chain ${"abcdef"[i]}`, chain(i))));
}, 90_000);
afterAll(async () => h?.close());

describe("Firecrawl v2 client: a job's failures", () => {
  it("each failed page has a code and a sentence that say what happened; a start page robots.txt refuses is in robotsBlocked", async () => {
    const u = (p: string) => `${h.site.url}${p}`;
    const urls = ["/f/ok", "/f/gone", "/f/broken", "/f/picture", "/f/slow"].map(u);
    const job = await v2(h.keys.full).batchScrape(urls, { options: { formats: ["markdown"], timeout: 5000 }, pollInterval: 1, timeout: 60 });
    expect(job.status).toBe("completed");
    expect(job.data.map((d) => d.metadata?.sourceURL)).toEqual([u("/f/ok")]);
    const { errors, robotsBlocked } = await v2(h.keys.full).getBatchScrapeErrors(job.id!);
    const by = Object.fromEntries(errors.map((e) => [e.url.replace(h.site.url, ""), e]));
    expect(Object.keys(by).sort()).toEqual(["/f/broken", "/f/gone", "/f/picture", "/f/slow"]);
    expect(by["/f/gone"]).toMatchObject({ code: "HTTP_404" });
    expect(by["/f/gone"].error).toMatch(/HTTP 404/);
    expect(by["/f/broken"]).toMatchObject({ code: "HTTP_500" });
    expect(by["/f/broken"].error).toMatch(/server error.*try again/);
    // It answered 200, but with nothing to read: not an HTTP failure, and not charged.
    expect(by["/f/picture"]).toMatchObject({ code: "UNSUPPORTED_CONTENT" });
    expect(by["/f/picture"].error).toMatch(/not HTML, PDF or text.*cost nothing/);
    expect(by["/f/slow"]).toMatchObject({ code: "TIMEOUT" });
    expect(by["/f/slow"].error).toMatch(/timeout/);
    expect(robotsBlocked).toEqual([]);
    // A crawl whose start page robots.txt disallows fails; the client learns why from its errors.
    const crawl = await v2(h.keys.full).crawl(u("/hidden/page"), { limit: 5, pollInterval: 1, timeout: 60 });
    expect(crawl.status).toBe("failed");
    const refused = await v2(h.keys.full).getCrawlErrors(crawl.id!);
    expect(refused.errors).toMatchObject([{ url: u("/hidden/page"), code: "ROBOTS_DISALLOWED" }]);
    expect(refused.errors[0].error).toMatch(/robots\.txt disallows/);
    expect(refused.robotsBlocked).toEqual([u("/hidden/page")]);
  }, 90_000);

  it("a crawl the key's quota cut short reads completed, and its errors say it stopped and why", async () => {
    // The tight key's plan allows 2 requests a month; the chain has 5 pages.
    const job = await v2(h.keys.tight).crawl(`${h.site.url}/q/a`, { limit: 5, pollInterval: 1, timeout: 60 });
    expect(job.status).toBe("completed");
    expect(job.data.length).toBe(2);
    const { errors } = await v2(h.keys.tight).getCrawlErrors(job.id!);
    const stop = errors.find((e) => e.code === "QUOTA_EXCEEDED");
    expect(stop).toBeDefined();
    expect(stop!.url).toBe(`${h.site.url}/q/a`);
    expect(stop!.error).toMatch(/stopped after 2 pages.*monthly quota ran out/);
  }, 90_000);

  it("v1: a batch whose first 100 recorded pages all failed still returns the page read after them", async () => {
    // Unrouted paths answer 404; the late page is queued last and answers last.
    const urls = [...Array.from({ length: 100 }, (_, i) => `${h.site.url}/missing/${i}`), `${h.site.url}/f/late`];
    const app = new FirecrawlAppV1({ apiKey: h.keys.full, apiUrl: `${h.url}/compat/firecrawl` });
    const res = await app.batchScrapeUrls(urls, { formats: ["markdown"] }, 1);
    if (!res.success) throw new Error("batch failed");
    expect(res.status).toBe("completed");
    expect(res.data.map((d) => d.metadata?.sourceURL)).toEqual([`${h.site.url}/f/late`]);
    expect(res.data[0].markdown).toMatch(/Late is a page/);
  }, 120_000);

  it("map: a start page and a sitemap that failed are named in agent_hints, which the v2 client passes on", async () => {
    const res = await v2(h.keys.full).map(`${h.site.url}/m/`, { limit: 100 });
    expect(res.links.map((l) => l.url)).toEqual(expect.arrayContaining([`${h.site.url}/m/one`, `${h.site.url}/m/two`]));
    expect(res.agent_hints).toHaveLength(2);
    expect(res.agent_hints![0]).toMatch(/start page could not be read \(the page answered 500\)/);
    expect(res.agent_hints![1]).toContain(`${h.site.url}/sitemap-b.xml could not be read`);
  }, 60_000);

  it("a crawl the site refused after its start page reads completed, and its errors say it stopped", async () => {
    const job = await v2(h.keys.full).crawl(`${h.site.url}/r/`, { limit: 10, pollInterval: 1, timeout: 60 });
    expect(job.status).toBe("completed");
    const { errors } = await v2(h.keys.full).getCrawlErrors(job.id!);
    expect(errors.filter((e) => e.code === "HTTP_429").length).toBeGreaterThanOrEqual(5);
    expect(errors.find((e) => e.code === "HTTP_429")!.error).toMatch(/refused the crawler with HTTP 429/);
    const stop = errors.find((e) => e.code === "SITE_REFUSED");
    expect(stop?.error).toMatch(/stopped after 1 page: the site refused the crawler/);
  }, 60_000);
});
