/**
 * Escalation's per-host memory shared across instances (issue #32, api.md §12): two `quarry serve`
 * processes on one PostgreSQL. A scrape on the first escalates a walled site to a proxy; a crawl
 * started on the second, whose pages both instances read through pg-boss, starts every page, its
 * start page included, at the proxy step the first one found: the walled site is not read straight
 * from Quarry again. Real parts: PostgreSQL, two servers, real loopback proxies, a real browser.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, type Server } from "../helpers/server.ts";
import { allPages, json, waitFor, type Job } from "../helpers/job-http.ts";
import { fixturePath } from "../helpers/articles.ts";
import { startHttpProxy, startWalledSite, type TestProxy } from "../helpers/forward-proxy.ts";
import { tempDatabase } from "../helpers/pg.ts";

const CHALLENGE = readFileSync(fixturePath("blocks/datadome.html"), "utf8");
const page = (title: string, links: string[]) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><article><h1>${title}</h1><p>${title} is a page of the walled site with enough words to be read as its main content, and a second sentence.</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</article></main></body></html>`;
const N = 8;
const links = Array.from({ length: N }, (_, i) => `/p/${i + 1}`);
const pages = { "/": page("Home", links), ...Object.fromEntries(links.map((l) => [l, page(`Page ${l}`, ["/"])])) };

let db: Awaited<ReturnType<typeof tempDatabase>>;
let servers: Server[] = [];
let key: string;
let proxy: TestProxy;
let site: Awaited<ReturnType<typeof startWalledSite>>;

beforeAll(async () => {
  db = await tempDatabase("blocked");
  site = await startWalledSite(pages, { status: 403, body: CHALLENGE });
  proxy = await startHttpProxy({ auth: "pg:pg-proxy-pw" });
  const env = {
    QUARRY_DATABASE_URL: db.url, QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_IP_RATE: "off", QUARRY_LOG_LEVEL: "debug",
    QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":100000}}', QUARRY_PROXIES: `eu=${proxy.url}`,
  };
  servers.push(await startServer("node", env));
  servers.push(await startServer("node", env));
  key = createKeyCli(env, "shared", "scrape").key;
}, 120_000);
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  servers = [];
  await Promise.all([site?.close(), proxy?.kill()]);
  await db?.drop();
});

describe("per-host memory on PostgreSQL, two instances", () => {
  it("a host escalated on one instance starts at the proxy on the other, for every page of a crawl", async () => {
    const first = await json(`${servers[0]!.url}/v1/scrape`, key, { method: "POST", body: JSON.stringify({ url: `${site.url}/p/1`, max_age_ms: 0 }) });
    expect(first.meta?.fetch_path, JSON.stringify(first)).toEqual(["static: 403 datadome captcha", "render: 403 datadome captcha", `proxy eu http://127.0.0.1:${proxy.port}: ok`]);
    const direct = site.reads.direct;

    const started = await json(`${servers[1]!.url}/v1/crawl`, key, { method: "POST", body: JSON.stringify({ url: `${site.url}/`, limit: N + 1, sitemap: "skip", timeout_ms: 5000 }) });
    expect(started.id, JSON.stringify(started)).toBeTruthy();
    const job = await waitFor(`${servers[1]!.url}/v1/crawl/${started.id}`, key, (j: Job) => ["completed", "failed", "cancelled"].includes(j.status), 120_000);
    expect(job.status, JSON.stringify(job.failures)).toBe("completed");
    expect(job.completed).toBe(N + 1);
    const got = await allPages(job, servers[1]!.url, key);
    for (const p of got) expect(p.fetch_path, p.url).toEqual([`proxy: remembered for 127.0.0.1:${site.port}`, `proxy eu http://127.0.0.1:${proxy.port}: ok`]);
    // No page was read straight from Quarry after the first scrape (robots.txt is not a page read).
    expect(site.reads.paths.filter((p) => p.startsWith("direct") && !p.endsWith("/robots.txt")).length).toBe(direct);
    // The pages were read by the two instances (pg-boss hands them out), every one recorded once.
    const byInstance = servers.map((s) => (s.output().match(new RegExp(`"job_id":"${started.id}"[^\\n]*job page recorded`, "g")) ?? []).length);
    expect(byInstance.reduce((a, b) => a + b, 0)).toBe(N + 1);
    for (const s of servers) expect(s.output()).not.toContain("pg-proxy-pw");
  }, 180_000);
});
