/**
 * Three `quarry serve` processes on one PostgreSQL share a crawl; one of them is SIGKILLed in the
 * middle. The other two take over what it held within QUARRY_JOB_RECOVERY (5 s here, instead of
 * waiting for pg-boss's expiry) and the job completes: every page of the site once in it, none
 * counted twice, and no page fetched twice beyond those the dead instance had in flight.
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
  // Shared by the three, the Crawl-delay makes the crawl last several seconds: time to kill one.
  cluster = await startCrawlCluster("crawlkill", 0.1, { QUARRY_JOB_RECOVERY: "5s" });
  ({ site, servers, env } = cluster);
}, 120_000);

afterAll(async () => {
  await cluster?.close("SIGKILL");
});

type Job = Record<string, any>;
const FINISHED = ["completed", "failed", "cancelled"];
// Redirect hops belong to the fetch that met them (/old → /older → /docs/moved).
const HOPS = ["/robots.txt", "/older", "/docs/moved"];

describe("an instance SIGKILLed in the middle of a shared crawl", () => {
  it("the others finish the job soon: nothing lost, nothing counted twice, only the dead one's pages in flight fetched again", async () => {
    const { key } = createKeyCli(env, "acme", "scrape");
    const call = async (i: number, path: string, init: RequestInit = {}): Promise<Job> =>
      (await fetch(servers[i]!.url + path, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } })).json();
    const started = await call(0, "/v1/crawl", { method: "POST", body: JSON.stringify({ url: `${site.ipUrl}/`, max_depth: 10, limit: 300, timeout_ms: PAGE_TIMEOUT_MS }) });
    expect(started.id).toMatch(/^crawl_/);
    const victim = servers[1]!;
    const recordedBy = (s: Server) => (s.output().match(new RegExp(`"job_id":"${started.id}"[^\\n]*job page recorded`, "g")) ?? []).length;
    // Mid-crawl: the victim has recorded pages of its own, and the job is far from done.
    let job: Job = {};
    for (const end = Date.now() + 60_000; Date.now() < end; ) {
      job = await call(0, `/v1/crawl/${started.id}`);
      if (FINISHED.includes(job.status) || (recordedBy(victim) >= 3 && job.completed >= 10)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(job.status).toBe("running");
    await victim.stop("SIGKILL");
    const killedAt = Date.now();
    const hitsAtKill = site.hits.length;

    for (const end = Date.now() + 90_000; Date.now() < end; ) {
      job = await call(0, `/v1/crawl/${started.id}`);
      if (FINISHED.includes(job.status)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(job.status).toBe("completed");
    // Soon: within a minute of the kill (pg-boss alone would have waited 180 s for the dead worker's tasks).
    expect(Date.now() - killedAt).toBeLessThan(60_000);
    // Whatever the dead instance held came back, by a survivor's watchdog or by pg-boss's expiry of its
    // tasks (both set by QUARRY_JOB_RECOVERY; which one comes first is a race): the completion within a
    // minute and every page exactly once below are what a user depends on.

    const pages: Job[] = [...job.data];
    for (let next = job.next; next; ) {
      const more = await call(2, new URL(next).pathname + new URL(next).search);
      pages.push(...more.data);
      next = more.next;
    }
    const paths = pages.map((p) => new URL(p.url).pathname + new URL(p.url).search);
    // Nothing lost, nothing recorded twice.
    expect(new Set(paths).size).toBe(paths.length);
    for (const p of sitePagePaths()) expect(paths.filter((x) => x === p), p).toHaveLength(1);
    expect(job.completed + job.failed).toBe(pages.length);
    // Fetched twice: only pages the dead instance had in flight (2 workers), each fetched again once.
    const counts = new Map<string, number>();
    for (const h of site.hits) if (!HOPS.includes(h.path)) counts.set(h.path, (counts.get(h.path) ?? 0) + 1);
    const twice = [...counts].filter(([, n]) => n > 1);
    expect(twice.length, JSON.stringify(twice)).toBeLessThanOrEqual(2);
    for (const [, n] of twice) expect(n).toBe(2);
    // ... and only after the kill: no page was fetched again while its first fetcher lived.
    const before = new Set(site.hits.slice(0, hitsAtKill).map((h) => h.path));
    const when = (p: string) => JSON.stringify(site.hits.filter((h) => h.path === p).map((h) => [h.start - killedAt, h.end - killedAt])) + servers.map((s) => s.output().split("\n").filter((l) => l.includes(p.replace(/\/$/, "")) || /handed back/.test(l)).slice(0, 6).join("\n")).join("\n--\n");
    for (const [p] of twice) expect(before.has(p) && site.hits.slice(hitsAtKill).some((h) => h.path === p), when(p)).toBe(true);
    // Counted once: one unit per page read successfully, at most; the dead one's unsettled units are lost, not doubled.
    const usage = await call(0, "/v1/usage");
    expect(usage.endpoints.crawl).toBeLessThanOrEqual(job.completed);
    expect(usage.endpoints.crawl).toBeGreaterThanOrEqual(job.completed - 2);
    // Good manners held through it all.
    expect(site.maxInFlight()).toBeLessThanOrEqual(2);
  }, 240_000);
});
