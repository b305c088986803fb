/**
 * Crawl and batch past bot walls (issue #32, api.md §12) against a real `quarry serve` on SQLite
 * over HTTP: a site that answers Quarry's own address (127.0.0.1) with a Cloudflare challenge and
 * the proxies' (127.0.0.3) with its pages, real loopback proxies (tests/helpers/forward-proxy.ts),
 * one of which dies in the middle of a crawl, and a captcha page nothing gets past. The server's
 * real browser is walled too (it reads from 127.0.0.1 as well), so escalation goes on to a proxy.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";
import { allPages, json, waitFor, type Job } from "../helpers/job-http.ts";
import { fixturePath } from "../helpers/articles.ts";
import { startHttpProxy, startWalledSite, type TestProxy } from "../helpers/forward-proxy.ts";

const CHALLENGE = readFileSync(fixturePath("blocks/cloudflare-challenge.html"), "utf8");
const CAPTCHA = readFileSync(fixturePath("blocks/hcaptcha.html"), "utf8");
const page = (title: string, links: string[]) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><article><h1>${title}</h1><p>${title} is a page of the walled site with enough words to be read as its main content, and a second sentence.</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</article></main></body></html>`;
const N = 10;
const links = Array.from({ length: N }, (_, i) => `/p/${i + 1}`);
const pages = { "/": page("Home", links), ...Object.fromEntries(links.map((l) => [l, page(`Page ${l}`, ["/"])])) };
const finished = (j: Job) => ["completed", "failed", "cancelled"].includes(j.status);

let server: Server;
let key: string;
let a: TestProxy, b: TestProxy;
let site: Awaited<ReturnType<typeof startWalledSite>>;
let captcha: Awaited<ReturnType<typeof startWalledSite>>;
/** Set by a test: called after each page the site served through a proxy. */
let onServed: ((path: string) => void) | null = null;

beforeAll(async () => {
  site = await startWalledSite(pages, { status: 403, body: CHALLENGE }, { onServed: (path, proxied) => proxied && onServed?.(path) });
  captcha = await startWalledSite({}, { status: 403, body: CAPTCHA }, { everyone: true });
  [a, b] = await Promise.all([startHttpProxy({ auth: "crawler:pw-a" }), startHttpProxy()]);
  const env = {
    QUARRY_DATA_DIR: tempDataDir(), QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":100000}}',
    QUARRY_PROXIES: `${a.url} ${b.url}`,
  };
  server = await startServer("node", env);
  key = createKeyCli(env, "walls", "scrape").key;
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await Promise.all([site?.close(), captcha?.close(), a?.kill(), b?.kill()]);
});

async function run(kind: "crawl" | "batch/scrape", body: Record<string, unknown>): Promise<{ job: Job; pages: Job[] }> {
  const started = await json(`${server.url}/v1/${kind}`, key, { method: "POST", body: JSON.stringify({ timeout_ms: 15000, ...body }) });
  expect(started.id, JSON.stringify(started)).toBeTruthy();
  const job = await waitFor(`${server.url}/v1/${kind}/${started.id}`, key, finished, 90_000);
  return { job, pages: await allPages(job, server.url, key) };
}
const used = async () => (await json(`${server.url}/v1/usage`, key)).used as number;

describe("a crawl behind a wall", () => {
  it("escalates its start page to a proxy, reads every other page through the host's remembered step, and a dying proxy loses no page", async () => {
    const before = await used();
    let served = 0;
    // The first proxy dies after the site served its fourth page through a proxy, in the middle of the crawl.
    onServed = () => void (++served === 4 && a.kill());
    const { job, pages: got } = await run("crawl", { url: `${site.url}/`, limit: N + 1, sitemap: "skip" });
    onServed = null;
    expect(job.status, JSON.stringify(job.failures)).toBe("completed");
    expect(job.completed).toBe(N + 1);
    expect(job.failed).toBe(0);
    const home = got.find((p) => p.url === `${site.url}/`)!;
    expect(home.fetch_path.slice(0, 2)).toEqual(["static: 403 cloudflare challenge", "render: 403 cloudflare challenge"]);
    expect(home.fetch_path[2]).toMatch(/^proxy http:\/\/127\.0\.0\.1:\d+: ok$/);
    for (const p of got.filter((p) => p !== home)) {
      expect(p.fetch_path[0]).toBe(`proxy: remembered for 127.0.0.1:${new URL(site.url).port}`);
      expect(p.markdown).toContain("walled site");
    }
    // Only the start page was read straight from Quarry (statically, then by the browser, which also
    // asked for the challenge's script); every other page went to the proxy first.
    const direct = site.reads.paths.filter((p) => p.startsWith("direct") && !p.endsWith("/robots.txt"));
    expect(direct.filter((p) => !p.includes("/cdn-cgi/"))).toEqual(["direct /", "direct /"]);
    // One unit per page read, whatever the path.
    expect(await used()).toBe(before + N + 1);
    const health = await json(`${server.url}/health`, key);
    expect(health.services.proxies.detail.map((p: Job) => p.status)).toEqual(["paused", "ok"]);
    expect(JSON.stringify(health)).not.toContain("pw-a");
  }, 120_000);
});

describe("a batch behind walls", () => {
  it("reads the walled pages through the remembered proxy step; a captcha page fails as `blocked`, free", async () => {
    const before = await used();
    const { job, pages: got } = await run("batch/scrape", { urls: [`${site.url}/p/1`, `${site.url}/p/2`, `${captcha.url}/login`] });
    expect(job.status).toBe("completed");
    expect(job.completed).toBe(2);
    const failure = job.failures.find((f: Job) => f.url === `${captcha.url}/login`);
    expect(failure).toEqual({ url: `${captcha.url}/login`, status_code: 403, error: "blocked" });
    const wall = got.find((p) => p.url === `${captcha.url}/login`)!;
    expect(wall.markdown).toBeUndefined();
    expect(wall.fetch_path).toEqual(["static: 403 hcaptcha captcha", "render: 403 hcaptcha captcha", expect.stringMatching(/^proxy http:\/\/127\.0\.0\.1:\d+: 403 hcaptcha captcha$/)]);
    expect(captcha.reads.proxied).toBe(1);
    expect(await used()).toBe(before + 2);
  }, 120_000);
});
