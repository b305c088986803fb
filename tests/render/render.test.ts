/**
 * POST /v1/scrape with rendering, in real Chromium (playwright-core, Debian's chromium) against
 * pages served on 127.0.0.2: auto-detection, actions, infinite scroll, pages that never settle,
 * spin or crash, and the egress guard inside the browser (a listener on a forbidden address must
 * see no connection at all).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { createBrowserPool, type BrowserPool } from "../../adapters/browser/pool.ts";
import { makeApp, MemoryLogger, type TestApp } from "../helpers/app.ts";
import { startRenderApp, type RenderApp } from "./app.ts";
import { renderResolver, SITE_HOST, startRenderSite, type Site } from "./site.ts";

/**
 * Chromium browser processes (not its helpers) below this test file's process. Debian starts them
 * through a shell script (which may not exec), so descendants are walked, and the script skipped.
 */
function browserPids(): number[] {
  const children = new Map<number, number[]>();
  const cmdline = new Map<number, string>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
      cmdline.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, "utf8"));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const stack = [...(children.get(process.pid) ?? [])];
  while (stack.length) {
    const pid = stack.pop()!;
    // Chromium rewrites its helpers' command lines into one string: match, don't split on NULs.
    const cmd = (cmdline.get(pid) ?? "").replaceAll("\0", " ");
    if (/chrom/i.test(cmd.split(" ")[0]!) && !cmd.includes(" --type=")) found.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** Both Debian builds Quarry finds by itself: the old headless shell (preferred) and the full browser. */
const BROWSERS = ["/usr/bin/chromium-headless-shell", "/usr/bin/chromium"].filter((p) => existsSync(p));

describe.skipIf(!BROWSERS.length).each(BROWSERS)("scrape with a browser (%s)", (CHROMIUM) => {
  let site: Site;
  let app: RenderApp;
  let pool: BrowserPool;
  let t: TestApp;
  let key: string;
  const lookups: string[] = [];
  const allow = parseAllowList([`${SITE_HOST}/32`]);
  const scrape = async (json: Record<string, unknown>) => {
    const res = await t.request("/v1/scrape", { method: "POST", key, json: { formats: ["text"], ...json } });
    return { status: res.status, body: await res.json() };
  };

  beforeAll(async () => {
    site = await startRenderSite();
    const resolve = renderResolver();
    app = await startRenderApp(site, { executablePath: CHROMIUM, resolver: (host) => (lookups.push(host), resolve(host)), warm: true });
    ({ pool, t, key } = app);
  }, 90_000);
  afterAll(async () => {
    await app?.close();
    await site?.close();
  });

  it("auto renders a script shell whose text arrives by fetch, and says so; never leaves it static", async () => {
    const auto = await scrape({ url: `${site.url}/fetch-json` });
    expect(auto.status).toBe(200);
    expect(auto.body.meta.rendered).toBe(true);
    expect(auto.body.data.text).toContain("The lighthouse keeper logged every ship");
    const never = await scrape({ url: `${site.url}/fetch-json`, render: "never" });
    expect(never.body.meta.rendered).toBe(false);
    expect(never.body.data.text).not.toContain("lighthouse keeper");
  }, 60_000);

  it("reads a URL that is no HTML page as without the browser, even with render always", async () => {
    const image = await scrape({ url: `${site.url}/asset/photo.png`, render: "always" });
    const imageStatic = await scrape({ url: `${site.url}/asset/photo.png`, render: "never" });
    expect(imageStatic.status).toBe(422);
    expect(image.status).toBe(imageStatic.status);
    expect(image.body.error.code).toBe(imageStatic.body.error.code);
    const text = await scrape({ url: `${site.url}/items?page=3`, render: "always" });
    expect(text.status).toBe(200);
    expect(text.body.data.text).toBe("Item from page 3 about the lighthouse.");
    expect(text.body.meta.rendered).toBe(false);
    expect(text.body.meta.render_note).toMatch(/not an HTML page \(text\/plain\)/);
  }, 60_000);

  it("keeps ordinary pages on the static path", async () => {
    const res = await scrape({ url: `${site.url}/never-settles`, render: "auto" });
    expect(res.body.meta.rendered).toBe(false);
    expect(res.body.data.text).toContain("Historians later used the logbook");
  });

  it("clicks to reveal content, and reports a failing action by its index", async () => {
    const ok = await scrape({ url: `${site.url}/click`, actions: [{ type: "click", selector: "#more" }] });
    expect(ok.status).toBe(200);
    expect(ok.body.meta.rendered).toBe(true);
    expect(ok.body.data.text).toContain("slow return of migrating birds");
    const bad = await scrape({ url: `${site.url}/click`, actions: [{ type: "wait", ms: 10 }, { type: "click", selector: "#missing" }] });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe("action_failed");
    expect(bad.body.error.message).toMatch(/^Action 1 \(click #missing\) failed/);
  }, 60_000);

  it("a wait_for selector that never appears says so at the deadline, not that the fetch was slow", async () => {
    // The page itself answers at once: "Fetching … took longer than 2000 ms" named the wrong thing.
    // 6 s: room for the page itself on a loaded machine, so only the selector can run out of time.
    const res = await scrape({ url: `${site.url}/click`, wait_for: "#never-there", timeout_ms: 6000 });
    expect(res.status).toBe(504);
    expect(res.body.error.code).toBe("timeout");
    expect(res.body.error.message).toBe(`wait_for: "#never-there" did not appear on ${site.url}/click within 6000 ms (timeout_ms).`);
  }, 60_000);

  it("scrolls an infinite list and waits for what it loads", async () => {
    const res = await scrape({ url: `${site.url}/scroll`, actions: [{ type: "scroll" }, { type: "wait", ms: 300 }, { type: "scroll" }, { type: "wait", ms: 300 }, { type: "scroll" }, { type: "wait", ms: 300 }], only_main_content: false });
    expect(res.status).toBe(200);
    expect(res.body.data.text).toContain("Item from page 3 about the lighthouse");
  }, 60_000);

  it("answers a page that never settles within its deadline", async () => {
    const started = Date.now();
    const res = await scrape({ url: `${site.url}/never-settles`, render: "always", timeout_ms: 8000 });
    expect(res.status).toBe(200);
    expect(res.body.data.text).toContain("lighthouse keeper");
    expect(Date.now() - started).toBeLessThan(8000);
  }, 30_000);

  it("kills a spinning page at its deadline and a crashing tab, without harming the next request", async () => {
    // wait_for under timeout_ms (one at or over it is a 400 before any work): the spinning page is what runs out of time.
    const spin = await scrape({ url: `${site.url}/spin`, render: "always", wait_for: 1500, timeout_ms: 2000 });
    expect(spin.status).toBe(504);
    const crash = await scrape({ url: `${site.url}/crash`, render: "always", wait_for: 8000, timeout_ms: 20000 });
    expect([502, 504]).toContain(crash.status);
    const after = await scrape({ url: `${site.url}/click`, render: "always" });
    expect(after.status).toBe(200);
    expect(pool.health()).toMatchObject({ status: "ok", pages_in_use: 0, max_pages: 4 });
  }, 60_000);

  it("looks a name up once for all of a page's connections to it, not once per connection", async () => {
    const res = await scrape({ url: `${site.url}/one-cdn`, render: "always" });
    expect(res.status).toBe(200);
    expect(res.body.data.text).toContain("lighthouse keeper");
    // 24 connections to cdn.test (12 images over http, 12 scripts through CONNECT), one lookup.
    expect(lookups.filter((h) => h === "cdn.test")).toEqual(["cdn.test"]);
  });

  it("answers 503 when the browser dies under a render, and starts it again for the next one", async () => {
    const first = browserPids();
    expect(first).toHaveLength(1);
    const during = scrape({ url: `${site.url}/click`, render: "always", wait_for: 4_000 });
    await new Promise((r) => setTimeout(r, 1_500));
    // And not before its page is open (a loaded machine may not have begun the render by then).
    for (const until = Date.now() + 20_000; pool.health().pages_in_use === 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 25));
    expect(pool.health().pages_in_use).toBe(1);
    process.kill(first[0]!, "SIGKILL");
    const died = await during;
    expect(died.status).toBe(503);
    expect(died.body.error.code).toBe("browser_unavailable");
    expect(died.body.error.message).toMatch(/exited while rendering/);
  }, 60_000);

  it("starts the browser again when it was killed, and the next render works", async () => {
    // A browser for this test to kill (the last one died in the test above).
    expect((await scrape({ url: `${site.url}/click?warm`, render: "always" })).status).toBe(200);
    const before = browserPids();
    expect(before).toHaveLength(1);
    process.kill(before[0]!, "SIGKILL");
    // At once: the pool may not have heard of the death yet.
    const res = await scrape({ url: `${site.url}/click`, actions: [{ type: "click", selector: "#more" }] });
    expect(res.status).toBe(200);
    expect(res.body.meta.rendered).toBe(true);
    expect(res.body.data.text).toContain("lighthouse keeper");
    const after = browserPids();
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before[0]);
    expect(pool.health().status).toBe("ok");
  }, 60_000);

  it("fetches no images, media or fonts for a text render, and all of them for a screenshot", async () => {
    const assets = () => site.seen.filter((u) => u.startsWith("/asset/"));
    const start = assets().length;
    const text = await scrape({ url: `${site.url}/pictures`, render: "always" });
    expect(text.status).toBe(200);
    expect(text.body.data.text).toContain("lighthouse keeper");
    // Scripts' own requests still go out; what is only seen does not.
    expect(assets().slice(start)).toEqual(["/asset/data.json"]);
    const shot = await scrape({ url: `${site.url}/pictures`, formats: ["screenshot"], render: "always" });
    expect(shot.status).toBe(200);
    expect(assets().slice(start)).toEqual(expect.arrayContaining(["/asset/photo.png", "/asset/font.woff2", "/asset/clip.mp4"]));
  });

  it("takes a PNG screenshot", async () => {
    const res = await scrape({ url: `${site.url}/click`, formats: ["text", "screenshot"] });
    expect(res.body.meta.rendered).toBe(true);
    const png = Uint8Array.from(atob(res.body.data.screenshot), (c) => c.charCodeAt(0));
    expect([...png.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  }, 30_000);

  it("lets nothing in the browser reach a forbidden address: images, scripts, styles, iframes, fetch, XHR, beacons, EventSource, WebSockets, workers, redirects, IPv6, IPv4-mapped and odd spellings, DNS names, file:", async () => {
    // With a screenshot asked for, images and fonts are fetched too, so they meet the proxy.
    const res = await scrape({ url: `${site.url}/ssrf`, formats: ["text", "screenshot"], render: "always", wait_for: "body", timeout_ms: 20_000 });
    expect(res.status).toBe(200);
    expect(res.body.data.text).toContain("lighthouse keeper");
    expect(res.body.data.text).not.toMatch(/root:/);
    // The page's script, its dedicated worker and its shared worker each made every attempt.
    const until = Date.now() + 10_000;
    while (!["/ssrf-done", "/ssrf-worker-ran?dedicated", "/ssrf-worker-ran?shared"].every((p) => site.seen.includes(p)) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(site.seen).toEqual(expect.arrayContaining(["/ssrf-done", "/ssrf-worker-ran?dedicated", "/ssrf-worker-ran?shared"]));
    const top = await scrape({ url: `${site.url}/redirect-private`, render: "always" });
    expect(top.status).toBe(422);
    expect(top.body.error.code).toBe("url_not_allowed");
    const port = site.forbidden.port;
    for (const url of [`http://127.0.0.3:${port}/`, `http://evil.test:${port}/`, `http://mixed.test:${port}/`, `http://localhost:${port}/`, `http://[::1]:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`, `http://2130706433:${port}/`, `http://0x7f.0.0.1:${port}/`]) {
      const direct = await scrape({ url, render: "always" });
      expect(direct.status, url).toBe(422);
    }
    for (const url of ["file:///etc/passwd", "chrome://version", "javascript:alert(1)", "data:text/html,<p>hi</p>"]) {
      const other = await scrape({ url, render: "always" });
      expect([400, 422], url).toContain(other.status);
      expect(JSON.stringify(other.body)).not.toMatch(/root:/);
    }
    expect(site.forbidden.hits).toEqual([]);
  }, 60_000);

  it("refuses downloads: a download URL is an error, not a file, and a page that starts one is read as a page", async () => {
    const direct = await scrape({ url: `${site.url}/download`, render: "always" });
    expect(direct.status).toBe(502);
    expect(direct.body.error.message).toMatch(/download/i);
    const auto = await scrape({ url: `${site.url}/auto-download`, render: "always" });
    expect(auto.status).toBe(200);
    expect(auto.body.data.text).toContain("lighthouse keeper");
  }, 30_000);

  it("refuses actions with render never, and validates actions", async () => {
    expect((await scrape({ url: `${site.url}/click`, render: "never", actions: [{ type: "click", selector: "#more" }] })).status).toBe(400);
    const tooMany = await scrape({ url: `${site.url}/click`, actions: Array.from({ length: 21 }, () => ({ type: "wait", ms: 1 })) });
    expect(tooMany.status).toBe(400);
    const badType = await scrape({ url: `${site.url}/click`, actions: [{ type: "hover", selector: "#more" }] });
    expect(badType.status).toBe(400);
    expect((await scrape({ url: `${site.url}/click`, actions: [{ type: "click" }] })).status).toBe(400);
  });
});

describe("scrape without a browser", () => {
  it("answers render always with 503 browser_unavailable saying how to install one, and auto falls back with a note", async () => {
    const site = await startRenderSite();
    const allow = parseAllowList([`${SITE_HOST}/32`]);
    const pool = createBrowserPool({ executablePath: null, maxPages: 4, allow, resolver: renderResolver(), userAgent: "QuarryBot/test", logger: new MemoryLogger() });
    const t = await makeApp({ pages: createSafeFetch({ allow, resolver: renderResolver() }), render: pool });
    try {
      const key = (await t.key("acme", ["scrape"])).secret;
      const always = await t.request("/v1/scrape", { method: "POST", key, json: { url: `${site.url}/fetch-json`, render: "always" } });
      expect(always.status).toBe(503);
      const err = (await always.json()).error;
      expect(err.code).toBe("browser_unavailable");
      expect(err.message).toContain("apt-get install chromium");
      const auto = await (await t.request("/v1/scrape", { method: "POST", key, json: { url: `${site.url}/fetch-json` } })).json();
      expect(auto.meta.rendered).toBe(false);
      expect(auto.meta.render_note).toContain("QUARRY_CHROMIUM_PATH");
      const health = await (await t.request("/health")).json();
      expect(health.services.browser).toMatchObject({ status: "disabled", max_pages: 4 });
      expect(health.status).toBe("ok");
    } finally {
      await t.close();
      await pool.close();
      await site.close();
    }
  });
});
