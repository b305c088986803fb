/**
 * One tenant must not be able to stall, starve or fill the server through the browser (#28), in
 * real Chromium against the local site on 127.0.0.2, with the extraction workers a server runs:
 * - a page of a few hundred bytes whose script writes 11 MB (40 MB in the issue, which only takes
 *   Chromium longer) is refused as the same page served static is (422 unsupported_content, the
 *   10 MiB cap, free), measured in the page before any of it crosses to Node;
 * - timeout_ms bounds the whole request, extraction of the rendered page included (504, free);
 * - a script or meta-refresh navigation to a private address is 422 url_not_allowed, free, as an
 *   HTTP redirect there already was;
 * - one account's renders that spin for ever cannot keep another account's render waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium, type BrowserPool } from "../../adapters/browser/pool.ts";
import { ExtractPool } from "../../adapters/extract/pool.ts";
import { nodeSpawner } from "../../adapters/extract/spawn.ts";
import type { TestApp } from "../helpers/app.ts";
import { startRenderApp, type RenderApp } from "./app.ts";
import { SITE_HOST, startRenderSite, type Site } from "./site.ts";

const CHROMIUM = findChromium(null);
const ENV = { QUARRY_EGRESS_ALLOW: `${SITE_HOST}/32`, QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":1000}}' };

describe.skipIf(!CHROMIUM)("the browser under one tenant's attacks", () => {
  let site: Site;
  let app: RenderApp;
  let pool: BrowserPool;
  let extract: ExtractPool;
  let t: TestApp;
  let key: string;
  const scrape = async (json: Record<string, unknown>, as = key) => {
    const res = await t.request("/v1/scrape", { method: "POST", key: as, json: { formats: ["text"], ...json } });
    return { status: res.status, body: await res.json() };
  };
  const used = async (as = key) => (await (await t.request("/v1/usage", { key: as })).json()).used;

  beforeAll(async () => {
    site = await startRenderSite();
    // The server's extraction: one worker thread with its heap limit (adapters/node/server.ts).
    extract = new ExtractPool({ size: 1, idleMs: 60_000, maxHeapBytes: 96 * 2 ** 20, spawn: await nodeSpawner(512, 16) });
    app = await startRenderApp(site, { executablePath: CHROMIUM, env: ENV, extract, warm: true });
    ({ pool, t, key } = app);
  }, 90_000);
  afterAll(async () => {
    await app?.close();
    await extract?.close();
    await site?.close();
  });

  it("a script that writes 11 MB is refused as the static page past 10 MiB is: 422 unsupported_content, not charged", async () => {
    const before = await used();
    const statik = await scrape({ url: `${site.url}/huge-static?n=2200000`, render: "never" });
    expect(statik.status).toBe(422);
    expect(statik.body.error.code).toBe("unsupported_content");
    // Out of layout's way only to keep the test short (Chromium lays 11 MB of text out in seconds).
    const url = `${site.url}/huge-script?n=2200000&style=content-visibility:hidden`;
    const rendered = await scrape({ url, render: "always", timeout_ms: 60_000 });
    expect(rendered.status).toBe(422);
    expect(rendered.body.error.code).toBe("unsupported_content");
    expect(rendered.body.error.message).toBe(`The page at ${url} is larger than 10 MiB (after decompression); Quarry stops reading there.`);
    expect(await used()).toBe(before);
    // Under the cap, the same page is read.
    const fits = await scrape({ url: `${site.url}/huge-script?n=2000`, render: "always" });
    expect(fits.status).toBe(200);
    expect(fits.body.data.text).toMatch(/^(word ){100}/);
  }, 90_000);

  it("timeout_ms bounds the whole request: a rendered page whose extraction outlasts it is a 504, not charged", async () => {
    const before = await used();
    // 150,000 paragraphs a script writes out of layout's way: rendered in about a second, many more to extract.
    const url = `${site.url}/many-paragraphs?n=150000&style=content-visibility:hidden`;
    const res = await scrape({ url, render: "always", timeout_ms: 4_000 });
    expect(res.status).toBe(504);
    expect(res.body.error.code).toBe("timeout");
    expect(res.body.error.message).toBe(`${url} was read, but extracting its content took longer than timeout_ms (4000 ms).`);
    expect(await used()).toBe(before);
    // The worker busy with the abandoned page was ended; the next page gets a fresh one.
    expect(extract.stats()).toMatchObject({ busy: 0, queued: 0 });
    expect((await scrape({ url: `${site.url}/click`, render: "always" })).status).toBe(200);
  }, 60_000);

  it("a script or meta-refresh navigation to a private address is 422 url_not_allowed, free, as an HTTP redirect there is; on a batch page too", async () => {
    const before = await used();
    const hits = site.forbidden.hits.length;
    const http302 = await scrape({ url: `${site.url}/redirect-private`, render: "always" });
    expect(http302.status).toBe(422);
    for (const path of ["/script-redirect", "/script-redirect?later", "/script-redirect?to=https", "/meta-refresh"]) {
      const res = await scrape({ url: `${site.url}${path}`, render: "always" });
      expect(res.status, path).toBe(422);
      expect(res.body.error.code, path).toBe("url_not_allowed");
      expect(res.body.error.message, path).toBe(http302.body.error.message);
    }
    expect(await used()).toBe(before);
    const start = await t.request("/v1/batch/scrape", { method: "POST", key, json: { urls: [`${site.url}/script-redirect`, `${site.url}/meta-refresh`, `${site.url}/click`], formats: ["text"], render: "always" } });
    expect(start.status).toBe(202);
    const { id } = await start.json();
    let job: Record<string, any>;
    for (const end = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 200))) {
      job = await (await t.request(`/v1/batch/scrape/${id}`, { key })).json();
      if (job.status !== "queued" && job.status !== "running") break;
      if (Date.now() > end) throw new Error(`batch still ${job.status}`);
    }
    expect(job.completed).toBe(1);
    expect(job.failed).toBe(2);
    expect(job.failures.map((f: { url: string; error: string }) => [new URL(f.url).pathname, f.error]).sort()).toEqual([["/meta-refresh", "url_not_allowed"], ["/script-redirect", "url_not_allowed"]]);
    // The private server saw nothing, as before the fix.
    expect(site.forbidden.hits.slice(hits)).toEqual([]);
  }, 90_000);

  it("one account's renders that spin for ever cannot keep another account's render waiting; each is closed at its deadline", async () => {
    const calmKey = (await t.key("calm", ["scrape"])).secret;
    const loads = () => site.seen.filter((u) => u.startsWith("/loop-forever")).length;
    const before = loads();
    const done: string[] = [];
    // Five renders of a page that loops for ever, each holding its slot until its 8 s deadline.
    const hog = Array.from({ length: 5 }, (_, i) =>
      scrape({ url: `${site.url}/loop-forever?${i}`, render: "always", timeout_ms: 8_000 }).then((r) => (done.push(`hog ${r.status}`), r)));
    // Until every slot the hog can have is taken, and its other renders wait for one.
    for (const end = Date.now() + 20_000; ; await new Promise((r) => setTimeout(r, 25))) {
      const started = loads() - before;
      if (started >= 4 || (started >= 3 && ((pool as Partial<BrowserPool>).slots?.().waiting ?? 0) >= 1)) break;
      if (Date.now() > end) throw new Error(`only ${started} spinning pages started`);
    }
    const calm = await scrape({ url: `${site.url}/click`, render: "always", timeout_ms: 6_000 }, calmKey).then((r) => (done.push(`calm ${r.status}`), r));
    expect(calm.status).toBe(200);
    expect(calm.body.data.text).toContain("Teaser only");
    // Answered while every one of the hog's renders was still spinning.
    expect(done).toEqual(["calm 200"]);
    const hogs = await Promise.all(hog);
    expect(hogs.map((r) => r.status)).toEqual([504, 504, 504, 504, 504]);
    // Each spinning page was closed at its deadline, its slot given back.
    await expect.poll(() => pool.health().pages_in_use, { timeout: 5_000 }).toBe(0);
  }, 60_000);
});
