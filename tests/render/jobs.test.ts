/**
 * Rendering on crawl and batch scrape, in real Chromium against the local site on 127.0.0.2:
 * a crawl whose script-shell pages come back rendered with their text (and the links their
 * scripts add), a batch with render always and a screenshot, a rendered job page that tries every
 * way to a forbidden address (whose listener must see nothing), validation as on scrape, and
 * jobs on a server without a browser.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { createBrowserPool, findChromium, type BrowserPool } from "../../adapters/browser/pool.ts";
import { makeApp, MemoryLogger, type TestApp } from "../helpers/app.ts";
import { startRenderApp, type RenderApp } from "./app.ts";
import { renderResolver, SITE_HOST, startRenderSite, type Site } from "./site.ts";

/** The browser Quarry would find by itself. */
const CHROMIUM = findChromium(null);
type Job = Record<string, any>;
const allow = parseAllowList([`${SITE_HOST}/32`]);
const ENV = { QUARRY_EGRESS_ALLOW: `${SITE_HOST}/32`, QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":1000}}' };

async function finished(t: TestApp, key: string, path: string, ms = 90_000): Promise<Job> {
  const until = Date.now() + ms;
  for (;;) {
    const j = await (await t.request(path, { key })).json();
    if (["completed", "failed", "cancelled"].includes(j.status) || Date.now() > until) return j;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function until(ok: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function start(t: TestApp, key: string, path: string, json: unknown): Promise<Job> {
  const res = await t.request(path, { method: "POST", key, json });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(202);
  const { id } = await res.json();
  return finished(t, key, `${path}/${id}`);
}

describe.skipIf(!CHROMIUM)("crawl and batch scrape with a browser", () => {
  let site: Site;
  let app: RenderApp;
  let pool: BrowserPool;
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    site = await startRenderSite();
    app = await startRenderApp(site, { executablePath: CHROMIUM, storage: "sqlite", env: ENV });
    ({ pool, t, key } = app);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await site?.close();
  });

  it("crawls a site whose script shells come back rendered with their text, and follows the links their scripts add", async () => {
    const job = await start(t, key, "/v1/crawl", { url: `${site.url}/site/`, formats: ["text"], limit: 20, max_depth: 3, timeout_ms: 20_000 });
    expect(job.status).toBe("completed");
    const byPath = Object.fromEntries(job.data.map((p: Job) => [new URL(p.url).pathname, p]));
    expect(Object.keys(byPath).sort()).toEqual(["/site/", "/site/found-by-script", "/site/shell-a", "/site/shell-b", "/site/static"]);
    for (const name of ["a", "b"]) {
      const p = byPath[`/site/shell-${name}`];
      expect(p.rendered, name).toBe(true);
      expect(p.text).toContain(`Shell ${name} says: The lighthouse keeper logged every ship`);
    }
    expect(byPath["/site/"].rendered).toBe(false);
    expect(byPath["/site/static"].rendered).toBe(false);
    expect(byPath["/site/static"].text).toContain("This page needs no script");
    expect(byPath["/site/found-by-script"].text).toContain("Only a rendered page links here");
    expect(job.failed).toBe(0);
  }, 120_000);

  it("renders a batch with render always, actions and a screenshot, page by page", async () => {
    const job = await start(t, key, "/v1/batch/scrape", {
      urls: [`${site.url}/click`, `${site.url}/fetch-json`], formats: ["text", "screenshot"], render: "always",
      actions: [{ type: "wait", selector: "button, #root" }], timeout_ms: 20_000,
    });
    expect(job.status).toBe("completed");
    expect(job.completed).toBe(2);
    for (const p of job.data) {
      expect(p.rendered, p.url).toBe(true);
      const png = Uint8Array.from(atob(p.screenshot), (c) => c.charCodeAt(0));
      expect([...png.subarray(0, 4)], p.url).toEqual([0x89, 0x50, 0x4e, 0x47]);
    }
    expect(job.data.find((p: Job) => p.url.endsWith("/fetch-json")).text).toContain("The lighthouse keeper logged every ship");
    const clicked = await start(t, key, "/v1/batch/scrape", { urls: [`${site.url}/click`], formats: ["text"], actions: [{ type: "click", selector: "#more" }] });
    expect(clicked.data[0].text).toContain("slow return of migrating birds");
    const failing = await start(t, key, "/v1/batch/scrape", { urls: [`${site.url}/click`], formats: ["text"], actions: [{ type: "click", selector: "#missing" }], timeout_ms: 10_000 });
    expect(failing.failed).toBe(1);
    expect(failing.failures[0].error).toBe("action_failed");
  }, 120_000);

  it("lets nothing in a rendered job page reach a forbidden address", async () => {
    const hits = site.forbidden.hits.length;
    const job = await start(t, key, "/v1/batch/scrape", { urls: [`${site.url}/ssrf`, `${site.url}/redirect-private`], formats: ["text", "screenshot"], render: "always", wait_for: 1500 });
    expect(job.status).toBe("completed");
    const ssrf = job.data.find((p: Job) => p.url.endsWith("/ssrf"));
    expect(ssrf.rendered).toBe(true);
    expect(ssrf.text).toContain("lighthouse keeper");
    expect(job.failures.map((f: Job) => f.error)).toEqual(["url_not_allowed"]);
    const crawl = await start(t, key, "/v1/crawl", { url: `${site.url}/ssrf`, formats: ["text"], render: "always", wait_for: 1500, limit: 5 });
    expect(crawl.data[0].rendered).toBe(true);
    expect(site.forbidden.hits.slice(hits)).toEqual([]);
  }, 120_000);

  it("closes the browser page of a render in progress when its job is cancelled", async () => {
    // A page that polls for ever, waiting for an element that never comes: only its 60 s deadline
    // would end it, were the cancel not passed on to the browser.
    const res = await t.request("/v1/batch/scrape", { method: "POST", key, json: { urls: [`${site.url}/never-settles`], formats: ["text"], wait_for: "#never-there", timeout_ms: 60_000 } });
    expect(res.status).toBe(202);
    const { id } = await res.json();
    const before = site.polls();
    await until(() => site.polls() > before + 3 && pool.health().pages_in_use === 1, 30_000, "the page to open and poll");
    const cancelledAt = Date.now();
    const del = await t.request(`/v1/batch/scrape/${id}`, { method: "DELETE", key });
    expect(del.status).toBe(200);
    expect((await del.json()).status).toBe("cancelled");
    await until(() => pool.health().pages_in_use === 0, 5_000, "the browser slot to be given back");
    const closedAt = Date.now();
    expect(closedAt - cancelledAt).toBeLessThan(5_000);
    // The page is gone: its polling (every 100 ms while it lives) stops, once the requests it had
    // already sent have arrived.
    let last = site.polls();
    let quietSince = Date.now();
    await until(() => {
      if (site.polls() !== last) [last, quietSince] = [site.polls(), Date.now()];
      return Date.now() - quietSince > 1_000;
    }, 6_000, "the page to stop polling");
    const job = await (await t.request(`/v1/batch/scrape/${id}`, { key })).json();
    expect(job.status).toBe("cancelled");
    expect(job.completed).toBe(0);
  }, 60_000);

  it("validates the render fields as scrape does", async () => {
    const post = (path: string, json: unknown) => t.request(path, { method: "POST", key, json });
    const never = await post("/v1/crawl", { url: `${site.url}/site/`, render: "never", formats: ["screenshot"] });
    expect(never.status).toBe(400);
    expect((await never.json()).error.message).toContain("need a browser");
    expect((await post("/v1/batch/scrape", { urls: [`${site.url}/click`], actions: Array.from({ length: 21 }, () => ({ type: "wait", ms: 1 })) })).status).toBe(400);
    expect((await post("/v1/batch/scrape", { urls: [`${site.url}/click`], actions: [{ type: "hover", selector: "#x" }] })).status).toBe(400);
    expect((await post("/v1/crawl", { url: `${site.url}/site/`, wait_for: 40_000 })).status).toBe(400);
    expect((await post("/v1/crawl", { url: `${site.url}/site/`, render: "sometimes" })).status).toBe(400);
  });
});

describe("crawl and batch scrape without a browser", () => {
  it("fail render-always pages with browser_unavailable, and keep auto pages static with a note", async () => {
    const site = await startRenderSite();
    const pool = createBrowserPool({ executablePath: null, maxPages: 4, allow, resolver: renderResolver(), userAgent: "QuarryBot/test", logger: new MemoryLogger() });
    const t = await makeApp({ storage: "sqlite", env: ENV, pages: createSafeFetch({ allow, resolver: renderResolver() }), render: pool });
    t.clock.now = () => Date.now();
    try {
      const key = (await t.key("acme", ["scrape"])).secret;
      const always = await start(t, key, "/v1/batch/scrape", { urls: [`${site.url}/fetch-json`], render: "always" });
      expect(always.failed).toBe(1);
      expect(always.failures[0].error).toBe("browser_unavailable");
      const auto = await start(t, key, "/v1/crawl", { url: `${site.url}/site/`, formats: ["text"], limit: 10 });
      expect(auto.status).toBe("completed");
      const shell = auto.data.find((p: Job) => p.url.endsWith("/site/shell-a"));
      expect(shell.rendered).toBe(false);
      expect(shell.render_note).toContain("QUARRY_CHROMIUM_PATH");
      expect(auto.data.some((p: Job) => p.url.endsWith("/found-by-script"))).toBe(false);
    } finally {
      await t.close();
      await pool.close();
      await site.close();
    }
  }, 60_000);
});
