/**
 * The browser and bot walls (issue #32, api.md §12), with the real Chromium: a site that walls
 * plain fetches but not browsers (its wall looks for the headers only a browser sends), escalated
 * to the render step and remembered; and a site that walls Quarry's own address, rendered through
 * a real loopback proxy in a context of its own, under the same egress guard: the page's request
 * for a private address never reaches the proxy.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBrowserPool, findChromium, type BrowserPool } from "../../adapters/browser/pool.ts";
import { createSafeFetch, parseAllowList, systemResolver } from "../../adapters/fetch/mod.ts";
import { parseProxies, ProxyPool } from "../../core/net/proxy-pool.ts";
import { makeApp, MemoryLogger, type TestApp } from "../helpers/app.ts";
import { fixturePath } from "../helpers/articles.ts";
import { startHttpProxy, startSocksProxy, startWalledSite, type TestProxy } from "../helpers/forward-proxy.ts";

const CHROMIUM = findChromium(null)!;
const CHALLENGE = readFileSync(fixturePath("blocks/cloudflare-challenge.html"), "utf8");
const ARTICLE = (title: string, extra = "") => `<!doctype html><html lang="en"><head><title>${title}</title></head><body><article><h1>${title}</h1><p>${"Words a browser reads here, in the main content of the page, several times over. ".repeat(4)}</p>${extra}</article></body></html>`;

describe("bot walls and the browser", () => {
  let browserOnly: ReturnType<typeof createServer>;
  let browserOnlyUrl: string;
  const seen = { plain: 0, browser: 0 };
  let walled: Awaited<ReturnType<typeof startWalledSite>>;
  let proxy: TestProxy;
  let socks: TestProxy;
  let pool: BrowserPool;
  let proxies: ProxyPool;
  let t: TestApp;
  let key: string;
  const scrape = (json: Record<string, unknown>) => t.request("/v1/scrape", { method: "POST", key, json: { max_age_ms: 0, ...json } });

  beforeAll(async () => {
    browserOnly = createServer((req, res) => {
      // A wall that lets browsers through: they send Sec-Fetch-* headers, a plain fetch does not.
      const browser = typeof req.headers["sec-fetch-dest"] === "string";
      browser ? seen.browser++ : seen.plain++;
      if (!browser) return void res.writeHead(403, { "content-type": "text/html" }).end(CHALLENGE);
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ARTICLE(`Browser page ${req.url}`));
    });
    await new Promise<void>((r) => browserOnly.listen(0, "127.0.0.1", () => r()));
    browserOnlyUrl = `http://127.0.0.1:${(browserOnly.address() as { port: number }).port}`;
    walled = await startWalledSite({ "/": ARTICLE("Through the proxy", '<img src="http://private.test:9/leak.png"><img src="http://169.254.169.254/latest/meta-data/">') }, { status: 403, body: CHALLENGE });
    proxy = await startHttpProxy({ auth: "browser:br-secret" });
    socks = await startSocksProxy({ auth: "sock:so-secret" });
    proxies = new ProxyPool(parseProxies(`nl:res=${proxy.url} :socks=${socks.url}`));
    const allow = parseAllowList(["127.0.0.1/32"]);
    const resolver = async (name: string) => (name === "private.test" ? ["10.0.0.9"] : systemResolver(name));
    pool = createBrowserPool({ executablePath: CHROMIUM, maxPages: 2, allow, resolver, userAgent: "QuarryBot/test", logger: new MemoryLogger(), proxies });
    t = await makeApp({ storage: "sqlite", render: pool, proxies, pages: createSafeFetch({ allow, proxies, resolver }) });
    key = (await t.key("acme", ["scrape"])).secret;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await pool?.close();
    await Promise.all([new Promise((r) => browserOnly?.close(r)), walled?.close(), proxy?.kill(), socks?.kill()]);
  });

  it("a site that walls plain fetches but not browsers: rendered, and the host remembered at the render step", async () => {
    const body = await (await scrape({ url: `${browserOnlyUrl}/one` })).json();
    expect(body.meta?.fetch_path, JSON.stringify(body)).toEqual(["static: 403 cloudflare challenge", "render: ok"]);
    expect(body.meta.rendered).toBe(true);
    expect(body.data.title).toBe("Browser page /one");
    const plain = seen.plain;
    const next = await (await scrape({ url: `${browserOnlyUrl}/two` })).json();
    expect(next.meta.fetch_path).toEqual([`render: remembered for ${new URL(browserOnlyUrl).host}`, "render: ok"]);
    expect(seen.plain).toBe(plain);
  }, 60_000);

  it("a render that must go through a proxy gets a context of its own through it, and its private requests never reach the proxy", async () => {
    const res = await scrape({ url: `${walled.url}/`, formats: ["markdown", "screenshot"], proxy: "auto" });
    const body = await res.json();
    expect(body.meta?.fetch_path, JSON.stringify(body)).toEqual(["render: 403 cloudflare challenge", `proxy nl:res http://127.0.0.1:${proxy.port}: ok`]);
    expect(body.data.title).toBe("Through the proxy");
    expect(body.data.screenshot.length).toBeGreaterThan(100);
    expect(walled.reads.proxied).toBeGreaterThanOrEqual(1);
    // Every connection the proxy was asked for went to the checked address of the walled site.
    expect(proxy.asked.length).toBeGreaterThan(0);
    for (const a of proxy.asked) expect(a).toBe(`127.0.0.1:${walled.port}`);
    expect(proxy.refused).toBe(0);
    expect(JSON.stringify(body)).not.toContain("br-secret");
    expect(proxies.status()[0]).toMatchObject({ status: "ok" });
  }, 60_000);

  it("a render through a SOCKS5 pool with credentials", async () => {
    const body = await (await scrape({ url: `${walled.url}/`, proxy: "socks", render: "always" })).json();
    expect(body.meta?.fetch_path, JSON.stringify(body)).toEqual([`proxy :socks socks5://127.0.0.1:${socks.port}: ok`]);
    expect(body.meta.rendered).toBe(true);
    expect(body.data.title).toBe("Through the proxy");
    for (const a of socks.asked) expect(a).toBe(`127.0.0.1:${walled.port}`);
    expect(socks.refused).toBe(0);
  }, 60_000);
});
