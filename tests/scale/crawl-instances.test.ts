/**
 * One crawl shared by three `quarry serve` processes on one PostgreSQL, through pg-boss: every
 * instance reads part of the site, every page is read once, recorded once and counted once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCrawlCluster, type CrawlCluster } from "../helpers/crawl-cluster.ts";
import { createKeyCli, type Server } from "../helpers/server.ts";
import { sitePagePaths, type TestSite, PAGE_TIMEOUT_MS } from "../helpers/test-site.ts";

let cluster: CrawlCluster;
let site: TestSite;
let servers: Server[] = [];
let env: Record<string, string>;

beforeAll(async () => {
  cluster = await startCrawlCluster("crawl3", 0.05);
  ({ site, servers, env } = cluster);
}, 120_000);

afterAll(async () => {
  await cluster?.close();
});

type Job = Record<string, any>;

describe("a crawl over three instances on PostgreSQL", () => {
  it("spreads the pages over all three and reads, records and counts each once", async () => {
    const { key } = createKeyCli(env, "acme", "scrape");
    const call = async (i: number, path: string, init: RequestInit = {}): Promise<Job> =>
      (await fetch(servers[i % 3]!.url + path, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } })).json();
    const started = await call(0, "/v1/crawl", { method: "POST", body: JSON.stringify({ url: `${site.ipUrl}/`, max_depth: 10, limit: 300, timeout_ms: PAGE_TIMEOUT_MS }) });
    expect(started.id, JSON.stringify(started) + servers[0]!.output().split("\n").filter((l) => /error/i.test(l)).slice(-5).join("\n")).toMatch(/^crawl_/);
    let job: Job = {};
    const until = Date.now() + 120_000;
    for (let i = 1; Date.now() < until; i++) {
      job = await call(i, `/v1/crawl/${started.id}`);
      if (["completed", "failed", "cancelled"].includes(job.status)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(job.status).toBe("completed");
    const pages: Job[] = [...job.data];
    for (let next = job.next; next; ) {
      const more = await call(2, new URL(next).pathname + new URL(next).search);
      pages.push(...more.data);
      next = more.next;
    }
    const paths = pages.map((p) => new URL(p.url).pathname + new URL(p.url).search);
    expect(new Set(paths).size).toBe(paths.length);
    for (const p of sitePagePaths()) expect(paths.filter((x) => x === p), p).toHaveLength(1);
    const fetched = new Map<string, number>();
    for (const h of site.hits) if (h.path !== "/robots.txt") fetched.set(h.path, (fetched.get(h.path) ?? 0) + 1);
    expect([...fetched].filter(([, n]) => n > 1)).toEqual([]);
    // Good manners hold for the three together (each alone would send 2 at once, with its own
    // spacing): never more than 2 requests at once to the site, spaced by its Crawl-delay as the
    // site sees them (arrivals jitter on a loaded machine: as tests/jobs/crawl.test.ts judges it,
    // nearly every gap at least half the delay and on average at least 90% of it). Redirect hops
    // belong to the fetch that met them.
    expect(site.maxInFlight()).toBeLessThanOrEqual(2);
    const sorted = site.hits.filter((h) => !["/robots.txt", "/older", "/docs/moved"].includes(h.path)).sort((a, b) => a.start - b.start);
    const gaps = sorted.slice(1).map((h, i) => h.start - sorted[i]!.start);
    const delayMs = site.crawlDelay * 1000;
    expect(gaps.filter((g) => g < delayMs / 2).length, `gaps ${gaps.join(",")}`).toBeLessThanOrEqual(Math.floor(gaps.length / 10));
    expect((sorted.at(-1)!.start - sorted[0]!.start) / gaps.length).toBeGreaterThanOrEqual(delayMs * 0.9);
    // Each instance recorded some of the pages.
    const byInstance = servers.map((s) => (s.output().match(new RegExp(`"job_id":"${started.id}"[^\\n]*job page recorded`, "g")) ?? []).length);
    expect(byInstance.reduce((a, b) => a + b, 0)).toBe(pages.length);
    for (const n of byInstance) expect(n, JSON.stringify(byInstance) + servers.map((s) => s.output().split("\n").filter((l) => /"level":(40|50)/.test(l)).slice(0, 3).join("\n")).join("\n---\n")).toBeGreaterThan(0);
    const usage = await call(1, "/v1/usage");
    expect(usage.endpoints.crawl).toBe(job.completed);
  }, 180_000);
});
