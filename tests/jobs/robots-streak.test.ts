/**
 * robots.txt is kept 10 minutes per origin. A crawl still running when its copy runs out, on a
 * site that has gone down, used to fail every remaining page as `robots_unreachable` (the new
 * fetch of robots.txt got no answer, and that disallowed everything for 10 more minutes) without
 * counting toward the host's streak, and end "completed" as if nothing had happened. Now a
 * robots.txt fetch that gets no answer counts as a page's request would, and is asked again by
 * the next page: 5 in a row stop the crawl with `site_unreachable`. A robots.txt that answers
 * ends the streak, as any HTTP answer does.
 *
 * In process on SQLite against a real local site; the app's clock (the one RobotsCache reads)
 * is moved 11 minutes on mid-crawl, as a crawl that ran that long would see it. One page at a
 * time (QUARRY_CRAWL_CONCURRENCY=1), so which page meets the expired copy is known.
 */
import { createServer, type Server as HttpServer, type ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";

type Job = Record<string, any>;
let t: TestApp;
let key: string;
let skew = 0;
const servers: HttpServer[] = [];

beforeAll(async () => {
  t = await makeApp({
    storage: "sqlite",
    pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }),
    env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_CRAWL_CONCURRENCY: "1", QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":100000}}' },
  });
  t.clock.now = () => Date.now() + skew;
  key = (await t.key("acme", ["scrape"])).secret;
});
afterAll(async () => {
  await t?.close();
  for (const s of servers) s.closeAllConnections(), s.close();
});

const page = (title: string, links: string[]) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><article><h1>${title}</h1><p>${title} is a page of the test site with enough words to be read as its main content.</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</article></main></body></html>`;

/** `/` links `/p/1` … `/p/N`; robots.txt allows everything; `answer` serves the n-th page asked for. */
async function startSite(pages: number, answer: (res: ServerResponse, n: number) => void): Promise<{ url: string; hits: string[]; down(): void }> {
  const hits: string[] = [];
  let served = 0;
  const server = createServer((req, res) => {
    const path = req.url ?? "/";
    hits.push(path);
    if (path === "/robots.txt") return void res.writeHead(200, { "content-type": "text/plain" }).end("User-agent: *\nAllow: /\n");
    if (path === "/") return void res.writeHead(200, { "content-type": "text/html" }).end(page("Home", Array.from({ length: pages }, (_, i) => `/p/${i + 1}`)));
    answer(res, ++served);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    hits,
    down: () => (server.close(), server.closeAllConnections()),
  };
}

async function crawl(url: string): Promise<{ job: Job; errors: string[] }> {
  const started = await (await t.request("/v1/crawl", { method: "POST", key, json: { url, limit: 100, max_depth: 1, timeout_ms: 10_000, sitemap: "skip" } })).json();
  expect(started.id, JSON.stringify(started)).toBeTruthy();
  for (let i = 0; i < 600; i++) {
    const job = await (await t.request(`/v1/crawl/${started.id}`, { key })).json();
    if (["completed", "failed", "cancelled"].includes(job.status)) {
      expect(job.next).toBeNull(); // every page in this one answer
      return { job, errors: job.data.filter((p: Job) => p.error).map((p: Job) => p.error) };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`crawl ${started.id} did not end`);
}

describe("a crawl whose site goes down after robots.txt's 10 minutes in the cache", () => {
  it("stops with site_unreachable after 5 robots.txt fetches that got no answer, instead of failing every page robots_unreachable", async () => {
    skew = 0;
    const s = await startSite(40, (res, n) => {
      res.writeHead(200, { "content-type": "text/html" }).end(page(`Page ${n}`, ["/"]));
      // After the third page the crawl has run 11 minutes, and the site is gone.
      if (n === 3) res.on("finish", () => ((skew = 11 * 60_000), s.down()));
    });
    const { job, errors } = await crawl(`${s.url}/`);
    expect({ status: job.status, stopped_reason: job.stopped_reason }).toEqual({ status: "completed", stopped_reason: "site_unreachable" });
    expect(job.completed).toBe(4);
    // Each of the 5 asked for robots.txt again (none kept the failure for the others), then the crawl stopped.
    expect(errors).toEqual(Array(5).fill("robots_unreachable"));
    expect(s.hits.filter((h) => h === "/robots.txt")).toHaveLength(1); // the others were refused: the site was down
    expect(job.discovered).toBe(41);
  }, 60_000);

  it("a robots.txt that answers ends the host's streak: 4 cut connections, a fresh robots.txt, 4 more, and the crawl runs to its end", async () => {
    skew = 0;
    // Every page cuts its connection without an answer (ECONNRESET); robots.txt answers throughout.
    const s = await startSite(8, (res, n) => {
      res.socket?.destroy();
      if (n === 4) skew = 11 * 60_000; // the next page finds robots.txt's copy expired, and fetches it again
    });
    const { job, errors } = await crawl(`${s.url}/`);
    expect({ status: job.status, stopped_reason: job.stopped_reason }).toEqual({ status: "completed", stopped_reason: null });
    expect(errors).toEqual(Array(8).fill("upstream_error"));
    expect(s.hits.filter((h) => h === "/robots.txt")).toHaveLength(2);
  }, 60_000);
});
