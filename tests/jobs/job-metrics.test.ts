/**
 * GET /metrics shows crawl and batch jobs, scraped from a real `quarry serve` (SQLite) over HTTP
 * as Prometheus would: the jobs queued and running and the pages this instance works on (while a
 * page is held open by its site), then, after crawls of the local test site, batches and a webhook
 * receiver that answers 500 to everything, the recorded pages by outcome, the finished jobs by
 * status and stopped_reason, and the webhook attempts (retried, given up). No label ever holds a
 * URL, a host or a job id: every label value comes from a fixed vocabulary.
 */
import { createServer, type Server as HttpServer, type ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";
import { json, waitFor, type Job } from "../helpers/job-http.ts";
import { startTestSite, type TestSite } from "../helpers/test-site.ts";

/** Every series of `name` in Prometheus text: its labels and value. */
function series(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  const out: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) continue;
    const body = line.includes("{") ? line.slice(line.indexOf("{") + 1, line.lastIndexOf("}")) : "";
    const labels = Object.fromEntries([...body.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    delete labels.service; // the registry's default label, on every series
    out.push({ labels, value: Number(line.slice(line.lastIndexOf(" ") + 1)) });
  }
  return out;
}

/** The value of the series of `name` whose labels include `labels`; undefined when there is none. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  return series(text, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

const sum = (text: string, name: string, labels: Record<string, string>) =>
  series(text, name).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);

const finished = (j: Job) => ["completed", "failed", "cancelled"].includes(j.status);

let site: TestSite;
let edge: HttpServer;
let edgeUrl: string;
let closedUrl: string;
let server: Server;
let key: string;
const held: ServerResponse[] = [];
const webhookPosts: string[] = [];

beforeAll(async () => {
  site = await startTestSite();
  // The rest of the internet edge: a page held open until the test lets it go, a page that fails
  // with 500, and a webhook receiver that answers 500 to every delivery.
  edge = createServer((req, res) => {
    if (req.url === "/robots.txt") return void res.writeHead(404).end();
    if (req.url === "/hold") return void held.push(res);
    if (req.url === "/boom") return void res.writeHead(500, { "content-type": "text/html" }).end("<html><body>down</body></html>");
    if (req.url === "/hook") {
      req.resume();
      return void req.on("end", () => (webhookPosts.push(req.url!), res.writeHead(500).end()));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => edge.listen(0, "127.0.0.1", () => r()));
  edgeUrl = `http://127.0.0.1:${(edge.address() as { port: number }).port}`;
  // A port nothing listens on: connections to it are refused.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
  closedUrl = `http://127.0.0.1:${(probe.address() as { port: number }).port}`;
  await new Promise<void>((r) => probe.close(() => r()));

  const env = {
    QUARRY_DATA_DIR: tempDataDir(), QUARRY_METRICS: "true", QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_IP_RATE: "off",
    QUARRY_PLANS: '{"free":{"quota":100000,"per_minute":100000,"jobs_concurrent":10}}',
  };
  key = createKeyCli(env, "acme", "scrape").key;
  server = await startServer("node", env);
}, 60_000);

afterAll(async () => {
  for (const res of held) res.destroy();
  await server?.stop();
  await site?.close();
  edge?.closeAllConnections();
  edge?.close();
});

const metrics = async () => {
  const res = await fetch(`${server.url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
};

async function start(kind: "crawl" | "batch/scrape", body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${server.url}/v1/${kind}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const ids: string[] = [];

describe("job metrics on a real server", () => {
  it("shows the jobs queued and running (0 when idle) and the pages this instance works on now", async () => {
    const idle = await metrics();
    for (const kind of ["crawl", "batch"]) for (const status of ["queued", "running"]) expect(sample(idle, "quarry_jobs_active", { kind, status })).toBe(0);
    expect(sample(idle, "quarry_job_tasks_in_progress")).toBe(0);

    const id = await start("batch/scrape", { urls: [`${edgeUrl}/hold`] });
    ids.push(id);
    await until(async () => held.length, (n) => n === 1);
    expect(held).toHaveLength(1);
    // Its only page is being read: no page recorded yet, so the job is still queued.
    const busy = await metrics();
    expect(sample(busy, "quarry_jobs_active", { kind: "batch", status: "queued" })).toBe(1);
    expect(sample(busy, "quarry_jobs_active", { kind: "batch", status: "running" })).toBe(0);
    expect(sample(busy, "quarry_jobs_active", { kind: "crawl", status: "queued" })).toBe(0);
    expect(sample(busy, "quarry_job_tasks_in_progress")).toBe(1);

    held[0]!.writeHead(200, { "content-type": "text/html" }).end("<html><head><title>Held</title></head><body><p>Let go at last, with enough words.</p></body></html>");
    const job = await waitFor(`${server.url}/v1/batch/scrape/${id}`, key, finished, 30_000);
    expect(job.status).toBe("completed");
    const after = await until(metrics, (t) => sample(t, "quarry_job_tasks_in_progress") === 0);
    expect(sample(after, "quarry_job_tasks_in_progress")).toBe(0);
    expect(sample(after, "quarry_jobs_active", { kind: "batch", status: "queued" })).toBe(0);
    expect(sample(after, "quarry_job_pages_total", { kind: "batch", outcome: "ok" })).toBe(1);
    expect(sample(after, "quarry_jobs_finished_total", { kind: "batch", status: "completed", reason: "none" })).toBe(1);
  }, 60_000);

  it("counts pages by outcome, finished jobs by status and reason, and webhook attempts; no label names a URL, host or job", async () => {
    const [crawl, refused, batch, down] = await Promise.all([
      // The whole test site: pages read, a 404 and a page that never answers.
      start("crawl", { url: `${site.ipUrl}/`, limit: 300, max_depth: 10, timeout_ms: 1500 }),
      // A start page robots.txt keeps out: the crawl fails with site_refused.
      start("crawl", { url: `${site.ipUrl}/private/secret` }),
      // A page read, a 404, a 500, every event's delivery refused by the receiver.
      start("batch/scrape", { urls: [`${site.ipUrl}/about`, `${site.ipUrl}/missing`, `${edgeUrl}/boom`], webhook: { url: `${edgeUrl}/hook` } }),
      // A host that refuses connections: 5 in a row, then its other pages are not requested.
      start("batch/scrape", { urls: Array.from({ length: 8 }, (_, i) => `${closedUrl}/p/${i}`) }),
    ]);
    ids.push(crawl, refused, batch, down);
    const status = async (kind: string, id: string, done: (j: Job) => boolean = finished) => waitFor(`${server.url}/v1/${kind}/${id}`, key, done, 90_000);
    const [c, r, d] = await Promise.all([status("crawl", crawl), status("crawl", refused), status("batch/scrape", down)]);
    // The batch's 5 deliveries (started, 3 pages, completed) are each given up after 5 attempts.
    const b = await status("batch/scrape", batch, (j) => finished(j) && j.webhook?.pending === 0 && j.webhook.failed === 5);
    expect([c.status, c.stopped_reason]).toEqual(["completed", null]);
    expect([r.status, r.stopped_reason]).toEqual(["failed", "site_refused"]);
    expect([b.status, b.stopped_reason, b.completed, b.failed]).toEqual(["completed", null, 1, 2]);
    expect([d.status, d.stopped_reason, d.failed]).toEqual(["failed", null, 8]);
    expect(webhookPosts).toHaveLength(25);

    const text = await metrics();
    // The crawl's pages, each counted once under its outcome.
    expect(sum(text, "quarry_job_pages_total", { kind: "crawl" })).toBe(c.completed + c.failed + r.failed);
    expect(sample(text, "quarry_job_pages_total", { kind: "crawl", outcome: "ok" })).toBe(c.completed);
    expect(sample(text, "quarry_job_pages_total", { kind: "crawl", outcome: "http_4xx" })).toBeGreaterThanOrEqual(1); // /missing
    expect(sample(text, "quarry_job_pages_total", { kind: "crawl", outcome: "timeout" })).toBe(1); // /slow
    expect(sample(text, "quarry_job_pages_total", { kind: "crawl", outcome: "robots" })).toBe(1);
    // The batches' pages: the held one and /about read, a 404, a 500, and the refusing host's 8.
    expect(sample(text, "quarry_job_pages_total", { kind: "batch", outcome: "ok" })).toBe(2);
    expect(sample(text, "quarry_job_pages_total", { kind: "batch", outcome: "http_4xx" })).toBe(1);
    expect(sample(text, "quarry_job_pages_total", { kind: "batch", outcome: "http_5xx" })).toBe(1);
    const unreachable = sample(text, "quarry_job_pages_total", { kind: "batch", outcome: "unreachable" }) ?? 0;
    const hostDown = sample(text, "quarry_job_pages_total", { kind: "batch", outcome: "host_down" }) ?? 0;
    expect(unreachable + hostDown).toBe(8);
    expect(unreachable).toBeGreaterThanOrEqual(5);
    expect(hostDown).toBeGreaterThanOrEqual(1);

    expect(sample(text, "quarry_jobs_finished_total", { kind: "crawl", status: "completed", reason: "none" })).toBe(1);
    expect(sample(text, "quarry_jobs_finished_total", { kind: "crawl", status: "failed", reason: "site_refused" })).toBe(1);
    expect(sample(text, "quarry_jobs_finished_total", { kind: "batch", status: "completed", reason: "none" })).toBe(2);
    expect(sample(text, "quarry_jobs_finished_total", { kind: "batch", status: "failed", reason: "none" })).toBe(1);

    expect(sample(text, "quarry_webhook_deliveries_total", { outcome: "given_up" })).toBe(5);
    expect(sample(text, "quarry_webhook_deliveries_total", { outcome: "retried" })).toBe(20);
    expect(sample(text, "quarry_webhook_deliveries_total", { outcome: "delivered" }) ?? 0).toBe(0);
    for (const kind of ["crawl", "batch"]) for (const s of ["queued", "running"]) expect(sample(text, "quarry_jobs_active", { kind, status: s })).toBe(0);

    // Every label of the job series is from a fixed vocabulary; no job id, URL or host anywhere.
    const vocabulary: Record<string, string[]> = {
      kind: ["crawl", "batch"],
      status: ["queued", "running", "completed", "failed", "cancelled"],
      outcome: ["ok", "http_4xx", "http_5xx", "timeout", "unreachable", "robots", "host_down", "unsupported", "other", "delivered", "retried", "given_up"],
      reason: ["none", "limit_reached", "quota_exceeded", "deadline", "site_refused", "site_unreachable", "cancelled"],
    };
    for (const name of ["quarry_job_pages_total", "quarry_jobs_finished_total", "quarry_webhook_deliveries_total", "quarry_jobs_active", "quarry_job_tasks_in_progress"]) {
      const all = series(text, name);
      expect(all.length, name).toBeGreaterThan(0);
      for (const s of all) for (const [label, value] of Object.entries(s.labels)) expect(vocabulary[label], `${name} ${label}`).toContain(value);
    }
    for (const id of ids) expect(text).not.toContain(id);
    for (const leak of ["127.0.0.1", "site.test", "/hook", "/private/", "acme"]) expect(text).not.toContain(leak);
  }, 150_000);
});
