/**
 * The `changes` format on crawl and batch (issue #31 item 4): each page compared with the
 * account's previous read of its URL, whichever operation made it (a scrape, a crawl, a batch),
 * kept in the store (SQLite), per account and tag. In process, against a local site whose pages
 * change between crawls.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { htmlPages, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";

type Job = Record<string, any>;
let t: TestApp;
let acme: string;
let other: string;
let server: PageServer;
let base = "";

const page = (title: string, words: string, links: string[] = []) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><article><h1>${title}</h1><p>${words} This page belongs to a small site that a crawl reads more than once.</p><p>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</p></article></main></body></html>`;
/** What each path serves now: [status, body]. */
let site: ReturnType<typeof htmlPages>;

beforeAll(async () => {
  // Only the pages set here answer; robots.txt, sitemaps and any other path are a 404.
  server = await startPageServer();
  site = htmlPages(server);
  site.set("/", [200, page("Home", "Welcome to the site.", ["/a", "/b", "/c"])]);
  site.set("/a", [200, page("Alpha", "Alpha says one thing today.")]);
  site.set("/b", [200, page("Beta", "Beta is a page that will go away.")]);
  site.set("/c", [200, page("Gamma", "Gamma never changes.")]);
  base = server.url;
  t = await makeApp({
    storage: "sqlite",
    pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }),
    env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: '{"free":{"quota":10000,"per_minute":100000}}' },
  });
  acme = (await t.key("acme", ["scrape"])).secret;
  other = (await t.key("other", ["scrape"])).secret;
});
afterAll(async () => {
  await t?.close();
  await server?.close();
});

async function finished(path: string, key: string): Promise<Job> {
  for (let i = 0; i < 600; i++) {
    const job = await (await t.request(path, { key })).json();
    if (["completed", "failed", "cancelled"].includes(job.status)) return job;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${path} did not end`);
}

async function run(kind: "crawl" | "batch/scrape", key: string, body: Record<string, unknown>): Promise<Record<string, Job>> {
  const res = await t.request(`/v1/${kind}`, { method: "POST", key, json: { timeout_ms: 30_000, formats: ["markdown", "changes"], ...body } });
  const started = await res.json();
  expect(res.status, JSON.stringify(started)).toBe(202);
  const job = await finished(`/v1/${kind === "crawl" ? "crawl" : "batch/scrape"}/${started.id}`, key);
  expect(job.status, JSON.stringify({ reason: job.stopped_reason, failures: job.failures })).toBe("completed");
  return Object.fromEntries(job.data.map((p: Job) => [new URL(p.url).pathname, p]));
}

const statuses = (pages: Record<string, Job>) => Object.fromEntries(Object.entries(pages).map(([p, d]) => [p, d.changes?.change_status ?? null]));

describe("changes on crawl and batch", () => {
  it("a first crawl finds every page new; the next one tells same, changed (with its diff) and removed", async () => {
    const firstAt = t.clock.now();
    const first = await run("crawl", acme, { url: `${base}/`, limit: 10, max_depth: 1, changes_options: { diff: true } });
    expect(statuses(first)).toEqual({ "/": "new", "/a": "new", "/b": "new", "/c": "new" });
    expect(first["/a"]!.changes).toEqual({ change_status: "new", previous_read_at: null, visibility: "visible", tag: null, diff: null });

    site.set("/a", [200, page("Alpha", "Alpha says another thing now.")]);
    site.set("/b", [404, "<h1>Gone</h1>"]);
    await t.clock.advance(60_000);
    const second = await run("crawl", acme, { url: `${base}/`, limit: 10, max_depth: 1, changes_options: { diff: true } });
    expect(statuses(second)).toEqual({ "/": "same", "/a": "changed", "/b": "removed", "/c": "same" });
    expect(second["/a"]!.changes.diff).toContain("-Alpha says one thing today.");
    expect(second["/a"]!.changes.diff).toContain("+Alpha says another thing now.");
    expect(second["/a"]!.changes.previous_read_at).toBe(new Date(firstAt).toISOString());
    expect(second["/b"]!).toMatchObject({ status_code: 404, error: "http_404", changes: { change_status: "removed", visibility: "hidden" } });
    expect(second["/c"]!.changes.diff).toBe("");
  });

  it("a batch compares with what the crawl read (one series per account and tag); another account and another tag start new", async () => {
    site.set("/c", [200, page("Gamma", "Gamma changed after all.")]);
    const batch = await run("batch/scrape", acme, { urls: [`${base}/a`, `${base}/c`] });
    expect(statuses(batch)).toEqual({ "/a": "same", "/c": "changed" });
    expect(batch["/c"]!.changes.diff).toBeUndefined();
    // A scrape after the batch compares with the batch's read.
    const scraped = await (await t.request("/v1/scrape", { method: "POST", key: acme, json: { url: `${base}/c`, formats: ["changes"] } })).json();
    expect(scraped.data.changes.change_status).toBe("same");

    expect(statuses(await run("batch/scrape", other, { urls: [`${base}/a`, `${base}/c`] }))).toEqual({ "/a": "new", "/c": "new" });
    expect(statuses(await run("batch/scrape", acme, { urls: [`${base}/a`], changes_options: { tag: "weekly" } }))).toEqual({ "/a": "new" });
  });

  it("pages without the format carry no changes, and changes_options without it is a 400", async () => {
    const plain = await run("batch/scrape", acme, { urls: [`${base}/a`], formats: ["markdown"] });
    expect(plain["/a"]!.changes).toBeUndefined();
    const res = await t.request("/v1/crawl", { method: "POST", key: acme, json: { url: `${base}/`, changes_options: { diff: true } } });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toMatch(/changes_options needs the changes format/);
  });
});
