/**
 * A real `quarry serve` process is SIGKILLed in the middle of a crawl and started again on the
 * same SQLite file: the job resumes and finishes, every page of the site is in it once, no page
 * recorded before the kill is fetched again, and no page is counted twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";
import { allPages, json, waitFor, type Job } from "../helpers/job-http.ts";
import { sitePagePaths, startTestSite, type TestSite, PAGE_TIMEOUT_MS } from "../helpers/test-site.ts";

let site: TestSite;
let server: Server | null = null;

beforeAll(async () => {
  // A Crawl-delay of 0.15 s makes the crawl take several seconds: time to kill it halfway.
  site = await startTestSite({ crawlDelay: 0.15 });
});
afterAll(async () => {
  await server?.stop("SIGKILL");
  await site?.close();
});

describe("SIGKILL during a crawl", () => {
  it("resumes after a restart: nothing lost, nothing fetched or counted twice", async () => {
    const dir = tempDataDir();
    const env = { QUARRY_DATA_DIR: dir, QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":100000}}' };
    const { key } = createKeyCli(env, "acme", "scrape");
    server = await startServer("node", env);
    const started = await json(`${server.url}/v1/crawl`, key, { method: "POST", body: JSON.stringify({ url: `${site.ipUrl}/`, max_depth: 10, limit: 300, timeout_ms: PAGE_TIMEOUT_MS }) });
    const statusUrl = `${server.url}/v1/crawl/${started.id}`;
    const before = await waitFor(statusUrl, key, (j) => j.completed >= 12, 60_000);
    expect(before.status).toBe("running");
    await server.stop("SIGKILL");
    const hitsAtKill = site.hits.length;
    // What the store held at the kill: read it from a fresh server before any work resumes is
    // impossible (work resumes at once), so take the last answer before the kill as a lower bound.
    const recordedBefore = new Set<string>(before.data.map((p: Job) => new URL(p.url).pathname + new URL(p.url).search));

    server = await startServer("node", env);
    const after = await waitFor(`${server.url}/v1/crawl/${started.id}`, key, (j) => ["completed", "failed", "cancelled"].includes(j.status), 90_000);
    expect(after.status).toBe("completed");
    const pages = await allPages(after, server.url, key);
    const paths = pages.map((p) => new URL(p.url).pathname + new URL(p.url).search);
    // Nothing lost: every page of the site is there, once.
    for (const p of sitePagePaths()) expect(paths.filter((x) => x === p), p).toHaveLength(1);
    expect(new Set(paths).size).toBe(paths.length);
    expect(after.completed + after.failed).toBe(pages.length);
    // Nothing recorded before the kill was fetched again after it.
    const refetched = site.hits.slice(hitsAtKill).map((h) => h.path).filter((p) => p !== "/robots.txt" && recordedBefore.has(p));
    expect(refetched).toEqual([]);
    // At most the pages in flight at the kill (2 per host) were fetched twice in all.
    const counts = new Map<string, number>();
    for (const h of site.hits) if (h.path !== "/robots.txt") counts.set(h.path, (counts.get(h.path) ?? 0) + 1);
    const twice = [...counts].filter(([p, n]) => n > 1 && p !== "/older" && p !== "/docs/moved");
    expect(twice.length, JSON.stringify(twice)).toBeLessThanOrEqual(2);
    // No page counted twice: the crawl units are at most the pages read successfully.
    const usage = await json(`${server.url}/v1/usage`, key);
    expect(usage.endpoints.crawl).toBeLessThanOrEqual(after.completed);
    expect(usage.endpoints.crawl).toBeGreaterThanOrEqual(after.completed - 2);
  }, 180_000);
});
