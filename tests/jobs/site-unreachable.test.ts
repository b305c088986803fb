/**
 * A site that goes away in the middle of a job, against a real `quarry serve` over HTTP. Before,
 * a crawl whose site went down (connections refused) went on asking for every page it had found,
 * each one failing (a timeout costing timeout_ms each), and ended "completed" as if nothing had
 * happened. Now 5 pages in a row that get no answer at all stop the crawl with
 * `stopped_reason: "site_unreachable"`, keeping what it read; HTTP answers of any status (404,
 * 500) are not unreachability; and a batch with one host down reads its other hosts' pages, the
 * down host's remaining URLs failing at once, unfetched and free.
 */
import { createServer, type Server as HttpServer, type ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";
import { allPages, json, waitFor, type Job } from "../helpers/job-http.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";

/** A site of `/` linking `/p/1` … `/p/N`; `answer` decides each page's fate; it can go down (listener closed). */
interface Site {
  url: string;
  /** Paths asked for while the site was up. */
  hits: string[];
  down(): Promise<void>;
}

type Answer = (path: string, res: ServerResponse, served: number) => void;

const page = (title: string, links: string[]) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><article><h1>${title}</h1><p>${title} is a page of the test site with enough words to be read as its main content, and a second sentence.</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</article></main></body></html>`;
const ok = (res: ServerResponse, title: string, links: string[] = ["/"], status = 200) =>
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(page(title, links));

async function startSite(pages: number, answer: Answer = (path, res) => ok(res, path)): Promise<Site> {
  const hits: string[] = [];
  let served = 0;
  const links = Array.from({ length: pages }, (_, i) => `/p/${i + 1}`);
  const server: HttpServer = createServer((req, res) => {
    const path = req.url ?? "/";
    hits.push(path);
    // No robots.txt and no sitemap: a crawl's start reads both (the sitemap is no page of the count).
    if (path === "/robots.txt" || path === "/sitemap.xml") return void res.writeHead(404).end();
    if (path === "/") return ok(res, "Home", links);
    answer(path, res, ++served);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  let closed: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    // Connections are refused from now on; those open are cut.
    down: () => (closed ??= new Promise((r) => { server.close(() => r()); server.closeAllConnections(); })),
  };
}

let server: Server;
let env: Record<string, string>;
const sites: Site[] = [];
const finished = (j: Job) => ["completed", "failed", "cancelled"].includes(j.status);

beforeAll(async () => {
  env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":100000}}' };
  server = await startServer("node", env);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  for (const s of sites) await s.down();
});

async function site(pages: number, answer?: Answer): Promise<Site> {
  const s = await startSite(pages, answer);
  sites.push(s);
  return s;
}

async function run(kind: "crawl" | "batch/scrape", key: string, body: Record<string, unknown>): Promise<{ job: Job; pages: Job[] }> {
  const started = await json(`${server.url}/v1/${kind}`, key, { method: "POST", body: JSON.stringify({ timeout_ms: 3000, ...body }) });
  expect(started.id, JSON.stringify(started)).toBeTruthy();
  const job = await waitFor(`${server.url}/v1/${kind === "crawl" ? "crawl" : "batch/scrape"}/${started.id}`, key, finished, 90_000);
  return { job, pages: await allPages(job, server.url, key) };
}

const errors = (pages: Job[], prefix = "") => pages.filter((p) => p.error && new URL(p.url).pathname.startsWith(prefix)).map((p) => p.error as string);

describe("a crawl whose site goes down mid-way", () => {
  it("stops soon with site_unreachable, keeps the pages it read, and neither fetches nor charges the rest", async () => {
    const { key } = createKeyCli(env, "down-crawl", "scrape");
    // The site answers "/" and 3 pages, then its listener closes: every later connection is refused.
    const s = await site(40, (path, res, served) => {
      ok(res, `Page ${path}`);
      if (served === 3) res.on("finish", () => void s.down());
    });
    const receiver = await startReceiver(() => 200);
    const hooks = () => receiver.got.map((g) => g.json) as Job[];
    const hook = receiver.url;
    try {
      const { job, pages } = await run("crawl", key, { url: `${s.url}/`, limit: 100, max_depth: 2, webhook: { url: hook, events: ["completed", "failed"] } });
      expect({ status: job.status, stopped_reason: job.stopped_reason }).toEqual({ status: "completed", stopped_reason: "site_unreachable" });
      // What it read before the site went away is kept, with its content.
      const read = pages.filter((p) => !p.error);
      expect(read.length).toBeGreaterThanOrEqual(3);
      expect(read.map((p) => new URL(p.url).pathname)).toContain("/");
      for (const p of read.filter((p) => p.url.includes("/p/"))) expect(p.markdown).toMatch(/enough words/);
      // Far fewer requests than pages found: the streak (5), plus what was under way when it
      // stopped. Pages that came up while it was stopping fail at once as host_unreachable.
      expect(job.discovered).toBeGreaterThanOrEqual(41);
      const failed = errors(pages);
      const asked = failed.filter((e) => e === "upstream_error").length;
      expect(asked).toBeGreaterThanOrEqual(5);
      expect(asked).toBeLessThanOrEqual(8);
      expect(failed.every((e) => e === "upstream_error" || e === "host_unreachable"), failed.join()).toBe(true);
      expect(job.completed + job.failed).toBeLessThan(25);
      // Only the pages read are charged.
      const usage = await json(`${server.url}/v1/usage`, key);
      expect(usage.used).toBe(job.completed);
      // The webhook's last event says why it stopped.
      await waitFor(`${server.url}/v1/crawl/${job.id}`, key, () => hooks().length > 0, 10_000);
      expect(hooks()[0]).toMatchObject({ type: "crawl.completed", data: { status: "completed", stopped_reason: "site_unreachable" } });
      // Firecrawl's clients learn it from the job's errors.
      const fc = await json(`${server.url}/compat/firecrawl/v2/crawl/${job.id}/errors`, key);
      const stop = fc.errors.find((e: Job) => e.code === "SITE_UNREACHABLE");
      expect(stop?.error).toMatch(/stopped after \d+ pages?: the site stopped answering/);
    } finally {
      await receiver.close();
    }
  }, 120_000);

  it("a site whose pages stop answering (every request timing out) stops after 5 timeouts, not one per page found", async () => {
    const { key } = createKeyCli(env, "hung", "scrape");
    // "/" and 2 pages answer; from then on the site accepts connections and never answers.
    const s = await site(30, (path, res, served) => {
      if (served <= 2) ok(res, `Page ${path}`);
    });
    const { job, pages } = await run("crawl", key, { url: `${s.url}/`, max_depth: 1, timeout_ms: 1000 });
    expect({ status: job.status, stopped_reason: job.stopped_reason }).toEqual({ status: "completed", stopped_reason: "site_unreachable" });
    expect(job.completed).toBe(3);
    const timedOut = errors(pages).filter((e) => e === "timeout").length;
    expect(timedOut).toBeGreaterThanOrEqual(5);
    // Requests made: "/", robots.txt, the 2 answered pages, the streak, and what was under way.
    expect(s.hits.filter((h) => h.startsWith("/p/")).length).toBeLessThanOrEqual(2 + 8);
  }, 60_000);

  it("a start page that gets no answer fails the crawl at once with site_unreachable", async () => {
    const { key } = createKeyCli(env, "down-start", "scrape");
    const s = await site(3);
    await s.down();
    // robots.txt not asked for: the start page's own request is what gets no answer (robots-streak.test.ts has robots.txt's).
    const { job, pages } = await run("crawl", key, { url: `${s.url}/`, respect_robots: false });
    expect({ status: job.status, stopped_reason: job.stopped_reason }).toEqual({ status: "failed", stopped_reason: "site_unreachable" });
    expect(errors(pages)).toEqual(["upstream_error"]);
  }, 60_000);

  it("HTTP answers of any status are not unreachability: a site answering 404 and 500 between cut connections is crawled to the end", async () => {
    const { key } = createKeyCli(env, "errors", "scrape");
    // Odd pages cut the connection without an answer (ECONNRESET); even ones answer 404 or 500.
    const s = await site(16, (path, res) => {
      const n = Number(path.split("/").pop());
      if (n % 2 === 1) return void res.socket?.destroy();
      ok(res, `Broken ${path}`, ["/"], n % 4 === 0 ? 404 : 500);
    });
    const { job, pages } = await run("crawl", key, { url: `${s.url}/`, max_depth: 1 });
    expect({ status: job.status, stopped_reason: job.stopped_reason }).toEqual({ status: "completed", stopped_reason: null });
    expect(s.hits.filter((h) => h.startsWith("/p/")).sort()).toEqual(Array.from({ length: 16 }, (_, i) => `/p/${i + 1}`).sort());
    const failed = errors(pages, "/p/").sort();
    expect(failed.filter((e) => e === "upstream_error")).toHaveLength(8);
    expect(failed.filter((e) => e.startsWith("http_"))).toHaveLength(8);
  }, 60_000);
});

describe("a batch over two hosts, one of which goes down", () => {
  it("reads the other host's pages; the down host's remaining URLs fail at once, unfetched and free, and the batch is not stopped", async () => {
    const { key } = createKeyCli(env, "down-batch", "scrape");
    const up = await site(8);
    const gone = await site(15, (path, res, served) => {
      ok(res, `Page ${path}`);
      if (served === 1) res.on("finish", () => void gone.down());
    });
    const urls: string[] = [];
    for (let i = 1; i <= 15; i++) {
      urls.push(`${gone.url}/p/${i}`);
      if (i <= 8) urls.push(`${up.url}/p/${i}`);
    }
    const { job, pages } = await run("batch/scrape", key, { urls });
    expect({ status: job.status, stopped_reason: job.stopped_reason }).toEqual({ status: "completed", stopped_reason: null });
    const of = (s: Site) => pages.filter((p) => p.url.startsWith(s.url));
    expect(of(up).map((p) => p.error ?? "ok")).toEqual(Array(8).fill("ok"));
    const lost = of(gone).map((p) => p.error ?? "ok");
    expect(lost).toHaveLength(15);
    // The streak of 5 (plus what was under way) was asked for; the rest were not.
    const asked = lost.filter((e) => e === "upstream_error").length;
    expect(asked).toBeGreaterThanOrEqual(5);
    expect(asked).toBeLessThanOrEqual(7);
    expect(lost.filter((e) => e === "host_unreachable").length).toBeGreaterThanOrEqual(7);
    const usage = await json(`${server.url}/v1/usage`, key);
    expect(usage.used).toBe(job.completed);
    // Firecrawl's clients get a code and a sentence for those pages.
    const fc = await json(`${server.url}/compat/firecrawl/v2/batch/scrape/${job.id}/errors`, key);
    const skipped = fc.errors.find((e: Job) => e.code === "HOST_UNREACHABLE");
    expect(skipped?.error).toMatch(/not requested: its site had stopped answering/);
  }, 120_000);
});
