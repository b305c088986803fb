/**
 * Issue #28: one tenant must not fill the server. In process on SQLite, through the API:
 *  - item 3: an account has at most its plan's `jobs_concurrent` jobs queued or running; past it
 *    a new one is a 429 `too_many_jobs` (Firecrawl's compatible route answers the same 429);
 *  - item 4: a page's stored content is capped (QUARRY_JOB_PAGE_BYTES: formats cut, named in
 *    `truncated`), so are the links a crawl takes from one page (QUARRY_JOB_PAGE_LINKS), and an
 *    account's jobs together (`jobs_storage_bytes`: the job stops with `storage_full`, the page that
 *    found it full costs nothing, a new job is a 429 `job_storage_full`); the job's answer names
 *    what was dropped; GET /metrics reports the database's size and what jobs hold.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { createPrometheusMetrics } from "../../adapters/metrics/prometheus.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";

const FAT_PAGE = 100 * 1024;
const sentences = (bytes: number) => "Lorem ipsum dolor sit amet. ".repeat(Math.ceil(bytes / 28));
const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 97}`).join(" ");
const article = (title: string, body: string, links: string[] = []) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><article><h1>${title}</h1><p>${body}</p>` +
  `${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</article></main></body></html>`;

/** big.test: /huge (about 1.5 MB of text), /many (100 links), /fat (10 links to pages of about 100 KB), /held/* (never answers). */
let site: Server;
let port = 0;
let t: TestApp;

beforeAll(async () => {
  site = createServer((req, res) => {
    const path = req.url ?? "/";
    const html = (body: string) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
    if (path === "/robots.txt") return void res.writeHead(404).end();
    if (path.startsWith("/held/")) return; // a page that holds its job open
    if (path === "/huge") return html(article("Huge", words(200_000)));
    if (path === "/many") return html(article("Many", "A page with a hundred links.", Array.from({ length: 100 }, (_, i) => `/many/${i}`)));
    if (path === "/fat") return html(article("Fat", "A page with ten large pages.", Array.from({ length: 10 }, (_, i) => `/fat/${i}`)));
    if (path.startsWith("/fat/")) return html(article(`Fat ${path}`, sentences(FAT_PAGE)));
    html(article(`Page ${path}`, "A small page of the test site with a few words in it."));
  });
  await new Promise<void>((r) => site.listen(0, "127.0.0.1", () => r()));
  port = (site.address() as { port: number }).port;
  t = await makeApp({
    storage: "sqlite",
    pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]), resolver: async (h) => (h === "big.test" ? ["127.0.0.1"] : []) }),
    metrics: createPrometheusMetrics(),
    env: {
      QUARRY_PLANS: JSON.stringify({
        free: { quota: 1000, per_minute: 1000 },
        pair: { quota: 1000, per_minute: 1000, jobs_concurrent: 2 },
        small: { quota: 1000, per_minute: 1000, jobs_storage_bytes: 350 * 1024 },
      }),
      QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_JOB_PAGE_BYTES: "256KB", QUARRY_JOB_PAGE_LINKS: "20", QUARRY_CRAWL_HOST_CONCURRENCY: "4", QUARRY_METRICS: "true",
    },
    options: { services: { jobs: { watchdogMs: 200 } } },
  });
  t.clock.now = () => Date.now();
});
afterAll(async () => {
  await t?.close();
  site?.closeAllConnections();
  await new Promise((r) => site?.close(r));
});

type Job = Record<string, any>;
const base = () => `http://big.test:${port}`;
const post = async (path: string, key: string, json: unknown) => t.request(path, { method: "POST", key, json });
const get = async (path: string, key: string): Promise<Job> => (await t.request(path, { key })).json();
async function finished(path: string, key: string): Promise<Job> {
  for (const end = Date.now() + 30_000; ; ) {
    const j = await get(path, key);
    if (["completed", "failed", "cancelled"].includes(j.status) || Date.now() > end) return j;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("jobs_concurrent", () => {
  it("refuses a third job of an account allowed two at once with 429 too_many_jobs, and takes it once one has ended", async () => {
    const key = (await t.key("pair-account", ["scrape"], "pair")).secret;
    const other = (await t.key("other-account", ["scrape"], "pair")).secret;
    const held = (i: number) => ({ urls: [`${base()}/held/${i}`], timeout_ms: 60_000 });
    const first = await post("/v1/batch/scrape", key, held(1));
    const second = await post("/v1/crawl", key, { url: `${base()}/held/2`, timeout_ms: 60_000 });
    expect([first.status, second.status]).toEqual([202, 202]);
    const third = await post("/v1/batch/scrape", key, held(3));
    expect(third.status).toBe(429);
    const body = await third.json();
    expect(body.error.code).toBe("too_many_jobs");
    expect(body.error.message).toContain("jobs_concurrent: 2");
    expect(third.headers.get("x-ratelimit-limit")).toBe("1000");
    // The compatible API answers in its own envelope, with the same status its clients read as "try later".
    const fc = await post("/compat/firecrawl/v2/crawl", key, { url: `${base()}/held/4` });
    expect(fc.status).toBe(429);
    expect(await fc.json()).toMatchObject({ success: false, code: "too_many_jobs" });
    // Another account is not held back by this one's jobs.
    expect((await post("/v1/batch/scrape", other, held(5))).status).toBe(202);
    // One ends (cancelled): room for the next.
    const { id } = await first.json();
    await t.request(`/v1/batch/scrape/${id}`, { method: "DELETE", key });
    const fourth = await post("/v1/batch/scrape", key, held(6));
    expect(fourth.status).toBe(202);
    for (const [kind, res] of [["crawl", second], ["batch/scrape", fourth]] as const) await t.request(`/v1/${kind}/${(await res.json()).id}`, { method: "DELETE", key });
  });
});

describe("storage caps", () => {
  it("cuts a page's stored content to QUARRY_JOB_PAGE_BYTES and names the formats cut", async () => {
    const key = (await t.key("huge-account", ["scrape"])).secret;
    const res = await post("/v1/batch/scrape", key, { urls: [`${base()}/huge`], formats: ["markdown", "html"] });
    const job = await finished(`/v1/batch/scrape/${(await res.json()).id}`, key);
    expect(job.status).toBe("completed");
    const page = job.data[0];
    expect(page.truncated).toEqual(["html", "markdown"]);
    // Both formats kept a share, within the cap as stored; what was cut is counted.
    expect(page.markdown.length).toBeGreaterThan(50_000);
    expect(page.html.length).toBeGreaterThan(50_000);
    expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(256 * 1024);
    expect(job.dropped.content_bytes).toBeGreaterThan(1_000_000);
    expect(job.stored_bytes).toBeLessThanOrEqual(256 * 1024 + 100);
    expect(job.completed).toBe(1);
  });

  it("takes at most QUARRY_JOB_PAGE_LINKS new links from one page and counts the rest", async () => {
    const key = (await t.key("many-account", ["scrape"])).secret;
    const res = await post("/v1/crawl", key, { url: `${base()}/many`, limit: 1000, max_depth: 1 });
    const job = await finished(`/v1/crawl/${(await res.json()).id}`, key);
    expect(job.status).toBe("completed");
    expect(job.discovered).toBe(21);
    expect(job.completed).toBe(21);
    expect(job.dropped.links).toBe(80);
  });

  it("stops a job whose account's jobs hold jobs_storage_bytes (storage_full, that page free), refuses its next job, and reports disk use", async () => {
    const key = (await t.key("small-account", ["scrape"], "small")).secret;
    const res = await post("/v1/crawl", key, { url: `${base()}/fat`, limit: 100, max_depth: 1 });
    const job = await finished(`/v1/crawl/${(await res.json()).id}`, key);
    expect(job.status).toBe("completed");
    expect(job.stopped_reason).toBe("storage_full");
    // 350 KB holds the start page and three pages of about 100 KB; the page that found it full is listed, without content.
    expect(job.completed).toBe(4);
    expect(job.failures.filter((f: Job) => f.error === "storage_full").length).toBeGreaterThanOrEqual(1);
    expect(job.dropped.pages).toBe(job.failures.filter((f: Job) => f.error === "storage_full").length);
    expect(job.stored_bytes).toBeLessThanOrEqual(350 * 1024);
    // Only the pages stored were charged.
    await t.drain();
    const usage = await get("/v1/usage", key);
    expect(usage.endpoints.crawl).toBe(job.completed);
    // Full: the next job is refused before anything is read.
    const next = await post("/v1/batch/scrape", key, { urls: [`${base()}/fat/1`] });
    expect(next.status).toBe(429);
    const body = await next.json();
    expect(body.error.code).toBe("job_storage_full");
    expect(body.error.message).toMatch(/jobs_storage_bytes/);
    expect(Number(next.headers.get("retry-after"))).toBeGreaterThan(0);
    // Disk use, for the operator.
    const metrics = await (await t.request("/metrics")).text();
    const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, "m").exec(metrics)?.[1]);
    expect(value("quarry_store_bytes")).toBeGreaterThan(300 * 1024);
    expect(value("quarry_job_data_bytes")).toBeGreaterThanOrEqual(job.stored_bytes);
  });
});
