/**
 * A rendered page whose host gives no answer fails as unreachable (siteUnreachable), as the page
 * fetcher's failures do, so a crawl with render "always" stops when its site goes down. Every
 * connection of the browser goes through Quarry's egress proxy: for plain HTTP the proxy used to
 * answer the browser a bare 502, which read as the site's own answer (a failed `http_502` page
 * that ended the host's streak), so such a crawl never stopped; a name that did not resolve was
 * refused as a private address. Now the proxy marks its own answers and the render path turns
 * them into the fetcher's errors; a tunnel the proxy refused by its policy (a redirect to a
 * private https address) is a refusal, not unreachability. Also shown: https failures seen by the browser itself (a
 * refused tunnel, a reset, a certificate it cannot verify, a host that never answers), and what
 * is not unreachability (a site's own 502, a site's own `x-quarry-egress` header).
 * Real Chromium against real sockets on 127.0.0.2.
 */
import { existsSync } from "node:fs";
import { createServer as createHttp, type Server as HttpServer, type ServerResponse } from "node:http";
import { createServer as createNet, type Server as NetServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { createBrowserPool, findChromium, type BrowserPool } from "../../adapters/browser/pool.ts";
import { EgressRefused, siteUnreachable } from "../../core/net/fetch-errors.ts";
import { makeApp, MemoryLogger, type TestApp } from "../helpers/app.ts";
import { makeCertificates, startServer, type TestServer } from "../fetch/helpers.ts";

const CHROMIUM = findChromium(null);
/** Both Debian builds: their network errors are worded by the same stack, but checked on each. */
const BROWSERS = ["/usr/bin/chromium-headless-shell", "/usr/bin/chromium"].filter((p) => existsSync(p));
const HOST = "127.0.0.2";
const allow = parseAllowList([`${HOST}/32`]);
const resolver = async (host: string) => {
  if (host === "site.test") return [HOST];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
};

let pool: BrowserPool;
let raw: NetServer; // what it does depends on the path asked (plain HTTP) or on nothing (TLS: see below)
let rawPort = 0;
let closedPort = 0;
let hang: NetServer; // accepts and never answers
let hangPort = 0;
let tlsSite: TestServer;

async function listen(server: NetServer | HttpServer): Promise<number> {
  await new Promise<void>((r) => server.listen(0, HOST, () => r()));
  return (server.address() as { port: number }).port;
}

beforeAll(async () => {
  raw = createNet((socket) => {
    socket.on("error", () => {});
    socket.once("data", (d) => {
      const path = d.toString("latin1").split(" ")[1] ?? "";
      if (d[0] === 0x16) return void socket.resetAndDestroy(); // a TLS hello: reset it
      if (path.endsWith("/reset")) return void socket.resetAndDestroy();
      if (path.endsWith("/to-private")) return void socket.end(`HTTP/1.1 302 Found\r\nlocation: https://127.0.0.3:${rawPort}/\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
      if (path.endsWith("/own-502")) return void socket.end("HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\ncontent-length: 24\r\nconnection: close\r\n\r\n<p>The site's own 502</p>");
      const body = "<html><body><p>A page that claims the proxy's header.</p></body></html>";
      socket.end(`HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nx-quarry-egress: refused\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
    });
  });
  rawPort = await listen(raw);
  hang = createNet((socket) => void socket.on("error", () => {}));
  hangPort = await listen(hang);
  const probe = createNet();
  closedPort = await listen(probe);
  await new Promise((r) => probe.close(r));
  tlsSite = await startServer(HOST, (_req, res) => res.end("<p>never read: its certificate is not trusted</p>"), makeCertificates());
}, 60_000);
afterAll(async () => {
  raw?.close();
  hang?.close();
  await tlsSite?.close();
});

async function failure(url: string, timeoutMs = 10_000): Promise<unknown> {
  try {
    const page = await pool.render({ url, timeoutMs });
    return { status: page.status, html: page.html };
  } catch (err) {
    return err;
  }
}

describe.skipIf(!BROWSERS.length).each(BROWSERS)("render failures that say the host cannot be reached (%s)", (browser) => {
  beforeAll(() => void (pool = createBrowserPool({ executablePath: browser, maxPages: 4, allow, resolver, userAgent: "QuarryBot/test", logger: new MemoryLogger() })));
  afterAll(async () => await pool?.close());

  it("plain HTTP through the egress proxy: a refused connection and a reset are unreachable, not the proxy's 502 page; a host that never answers times out", async () => {
    for (const url of [`http://${HOST}:${closedPort}/`, `http://${HOST}:${rawPort}/reset`]) {
      const err = await failure(url);
      expect(err, url).toBeInstanceOf(Error);
      expect(siteUnreachable(err), `${url}: ${String(err)}`).toBe(true);
      expect((err as { code: string }).code).toBe("upstream_error");
    }
    // A host that accepts and never answers: the page's deadline, spent reaching it.
    const slow = await failure(`http://${HOST}:${hangPort}/`, 3000);
    expect((slow as { code: string }).code).toBe("timeout");
    expect(siteUnreachable(slow)).toBe(true);
  }, 60_000);

  it("a name that does not resolve, http or https: refused as the page fetcher refuses it, and unreachable", async () => {
    for (const url of ["http://gone.test/", "https://gone.test/"]) {
      const err = await failure(url);
      expect(err, url).toBeInstanceOf(EgressRefused);
      expect((err as EgressRefused).reason).toBe("unresolvable");
      expect(siteUnreachable(err), url).toBe(true);
    }
  }, 60_000);

  it("https as the browser sees it: a refused tunnel, a reset handshake, a host that never answers", async () => {
    for (const url of [`https://${HOST}:${closedPort}/`, `https://${HOST}:${rawPort}/`, `https://${HOST}:${hangPort}/`]) {
      const err = await failure(url, 3000);
      expect(err, url).toBeInstanceOf(Error);
      expect(siteUnreachable(err), `${url}: ${String(err)}`).toBe(true);
    }
  }, 60_000);

  it("https with a certificate the browser cannot verify: unreachable, as for the page fetcher", async () => {
    const err = await failure(`${tlsSite.origin}/`);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as { internal?: string }).internal)).toMatch(/ERR_CERT_/);
    expect(siteUnreachable(err)).toBe(true);
  }, 60_000);

  it("a redirect to a private https address: refused by the egress policy, not unreachable (the browser words both alike)", async () => {
    const err = await failure(`http://${HOST}:${rawPort}/to-private`);
    expect(err).toBeInstanceOf(EgressRefused);
    expect((err as EgressRefused).reason).toBe("non_public_address");
    expect(siteUnreachable(err)).toBe(false);
  }, 60_000);

  it("the site's own answers are answers: its 502 page, and its own x-quarry-egress header, which the proxy drops", async () => {
    expect(await failure(`http://${HOST}:${rawPort}/own-502`)).toMatchObject({ status: 502 });
    expect(await failure(`http://${HOST}:${rawPort}/claims`)).toMatchObject({ status: 200, html: expect.stringContaining("claims the proxy's header") });
  }, 60_000);
});

describe.skipIf(!CHROMIUM)("a crawl with render always whose plain-HTTP site goes down", () => {
  let t: TestApp;
  let site: HttpServer;

  beforeAll(() => void (pool = createBrowserPool({ executablePath: CHROMIUM, maxPages: 4, allow, resolver, userAgent: "QuarryBot/test", logger: new MemoryLogger() })));
  afterAll(async () => {
    await t?.close();
    await pool?.close();
    site?.closeAllConnections();
    site?.close();
  });

  it("stops with site_unreachable after 5 pages that got no answer, instead of rendering every page found", async () => {
    const page = (title: string, links: string[]) =>
      `<!doctype html><html><head><title>${title}</title></head><body><main><article><h1>${title}</h1><p>${title} is a page of the test site with enough words to be read as its main content.</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</article></main></body></html>`;
    // The site answers the start page and two more, then goes down. It goes down once the job has
    // recorded those three: a crawl that stops drops the pages it is still reading, so going down
    // as the second answer left (as this test did) let a loaded machine's slow render of it lose
    // the race to five failed requests in the other host slot. Requests that come before then wait.
    let served = 0;
    const asked: string[] = [];
    const waiting: ServerResponse[] = [];
    site = createHttp((req, res) => {
      asked.push(req.url ?? "/");
      // No robots.txt and no sitemap (a crawl's start reads both): neither is a page of the count.
      if (req.url === "/robots.txt" || req.url === "/sitemap.xml") return void res.writeHead(404).end();
      if (req.url !== "/" && served === 2) return void waiting.push(res);
      res.writeHead(200, { "content-type": "text/html" });
      if (req.url === "/") return void res.end(page("Home", Array.from({ length: 30 }, (_, i) => `/p/${i + 1}`)));
      served++;
      res.end(page(`Page ${req.url}`, ["/"]));
    });
    const port = await listen(site);
    // The browser starts before the crawl (a page of the other local server), so its start, slow on a
    // loaded machine, is not spent from the start page's deadline.
    expect(await failure(`http://${HOST}:${rawPort}/own-502`, 60_000)).toMatchObject({ status: 502 });
    t = await makeApp({
      storage: "sqlite",
      env: { QUARRY_EGRESS_ALLOW: `${HOST}/32`, QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":100000}}' },
      pages: createSafeFetch({ allow, resolver }),
      render: pool,
    });
    t.clock.now = () => Date.now();
    const key = (await t.key("acme", ["scrape"])).secret;
    const res = await t.request("/v1/crawl", { method: "POST", key, json: { url: `http://${HOST}:${port}/`, max_depth: 1, render: "always", timeout_ms: 30_000 } });
    expect(res.status).toBe(202);
    const { id } = await res.json();
    let job: Record<string, any> = {};
    const poll = async (until: () => boolean) => {
      for (let i = 0; i < 1200 && !until(); i++) {
        await new Promise((r) => setTimeout(r, 100));
        job = await (await t.request(`/v1/crawl/${id}`, { key })).json();
      }
    };
    const ended = () => ["completed", "failed", "cancelled"].includes(job.status);
    await poll(() => ended() || job.completed >= 3);
    // Down: no more connections, and the requests that were waiting are reset.
    site.close();
    for (const r of waiting) r.socket?.resetAndDestroy();
    site.closeAllConnections();
    await poll(ended);
    expect({ status: job.status, stopped_reason: job.stopped_reason }).toEqual({ status: "completed", stopped_reason: "site_unreachable" });
    expect(job.completed).toBe(3);
    const errors: string[] = job.data.filter((p: { error?: string }) => p.error).map((p: { error: string }) => p.error);
    expect(errors.filter((e) => e === "upstream_error").length).toBeGreaterThanOrEqual(5);
    expect(errors.every((e) => e === "upstream_error" || e === "host_unreachable"), errors.join()).toBe(true);
    expect(job.completed + job.failed).toBeLessThan(20);
  }, 150_000);
});
