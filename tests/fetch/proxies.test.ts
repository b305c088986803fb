/**
 * Page fetches through the operator's proxies (QUARRY_PROXIES, api.md §12), against real proxies
 * on loopback that would connect anywhere (tests/helpers/forward-proxy.ts): HTTP CONNECT and
 * SOCKS5, with credentials; rotation per host; a dead proxy paused and the next one taken; and the
 * egress guard deciding on the target before the proxy hears of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { EgressRefused, UpstreamNetworkError } from "../../core/net/fetch-errors.ts";
import { parseProxies, ProxyPool } from "../../core/net/proxy-pool.ts";
import { startHttpProxy, startSocksProxy, startWalledSite, type TestProxy } from "../helpers/forward-proxy.ts";

const WALL = { status: 403, body: "<title>Just a moment...</title>" };
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe("fetching through QUARRY_PROXIES", () => {
  let site: Awaited<ReturnType<typeof startWalledSite>>;
  let a: TestProxy, b: TestProxy, socks: TestProxy;
  beforeAll(async () => {
    site = await startWalledSite({ "/": "<h1>the page</h1>", "/x": "<h1>x</h1>" }, WALL);
    [a, b, socks] = await Promise.all([startHttpProxy({ auth: "alice:s3cr#t" }), startHttpProxy(), startSocksProxy({ auth: "bob:pa ss" })]);
  });
  afterAll(async () => {
    await Promise.all([site?.close(), a?.kill(), b?.kill(), socks?.kill()]);
  });

  const allow = parseAllowList(["127.0.0.1/32"]);

  it("reads through an HTTP proxy with credentials, from the proxy's address, and says which proxy (never its credentials)", async () => {
    const pool = new ProxyPool(parseProxies(`de:res=${a.url}`));
    const pages = createSafeFetch({ allow, proxies: pool });
    const direct = await pages.fetchPage(`${site.url}/`);
    expect(direct.status).toBe(403);
    const page = await pages.fetchPage(`${site.url}/`, { proxy: { pool: "res" } });
    expect(page.status).toBe(200);
    expect(text(page.body)).toContain("the page");
    expect(page.via).toBe(`de:res http://127.0.0.1:${a.port}`);
    expect(JSON.stringify(pool.status())).not.toContain("s3cr");
    expect(a.refused).toBe(0);
    // The proxy was asked to CONNECT to the address Quarry checked, not to a name it would resolve itself.
    expect(a.asked.at(-1)).toBe(`127.0.0.1:${site.port}`);
  });

  it("reads through a SOCKS5 proxy with user and password", async () => {
    const pool = new ProxyPool(parseProxies(`:s=${socks.url}`));
    const page = await createSafeFetch({ allow, proxies: pool }).fetchPage(`${site.url}/x`, { proxy: { pool: "s" } });
    expect(page.status).toBe(200);
    expect(text(page.body)).toContain("<h1>x</h1>");
    expect(socks.asked.at(-1)).toBe(`127.0.0.1:${site.port}`);
    expect(socks.refused).toBe(0);
  });

  it("rotates: successive reads of one host go through different proxies of the pool", async () => {
    const pool = new ProxyPool(parseProxies(`${a.url} ${b.url}`));
    const pages = createSafeFetch({ allow, proxies: pool });
    const vias = [];
    for (let i = 0; i < 4; i++) vias.push((await pages.fetchPage(`${site.url}/`, { proxy: {} })).via);
    expect(new Set(vias).size).toBe(2);
    expect(vias[0]).not.toBe(vias[1]);
    expect(vias[0]).toBe(vias[2]);
  });

  it("a proxy with wrong credentials is the proxy's failure: paused, and the next proxy reads the page", async () => {
    let now = 1_000_000;
    const wrong = a.url.replace("s3cr%23t", "nope");
    const pool = new ProxyPool(parseProxies(`${wrong}, ${b.url}`), { now: () => now, pauseMs: 30_000 });
    const pages = createSafeFetch({ allow, proxies: pool });
    const page = await pages.fetchPage(`${site.url}/`, { proxy: {} });
    expect(page.status).toBe(200);
    expect(page.via).toBe(`http://127.0.0.1:${b.port}`);
    const [p1, p2] = pool.status();
    expect(p1).toMatchObject({ status: "paused", failures: 1, paused_until: new Date(now + 30_000).toISOString() });
    expect(p2).toMatchObject({ status: "ok", failures: 0 });
    expect(JSON.stringify(pool.status())).not.toContain("nope");
    // While paused it is not asked again; after its pause it is.
    const before = a.refused;
    await pages.fetchPage(`${site.url}/`, { proxy: {} });
    expect(a.refused).toBe(before);
    now += 30_001;
    expect(pool.status()[0]!.status).toBe("ok");
  });

  it("a dead proxy is paused and the read goes on through another; all dead is an upstream_error naming no credentials", async () => {
    const dying = await startHttpProxy({ auth: "carol:hunter2" });
    const pool = new ProxyPool(parseProxies(`${dying.url} ${b.url}`));
    const pages = createSafeFetch({ allow, proxies: pool });
    expect((await pages.fetchPage(`${site.url}/`, { proxy: {} })).via).toBe(`http://127.0.0.1:${dying.port}`);
    await dying.kill();
    for (let i = 0; i < 3; i++) expect((await pages.fetchPage(`${site.url}/`, { proxy: {} })).status).toBe(200);
    expect(pool.status().map((p) => p.status)).toEqual(["paused", "ok"]);
    const alone = new ProxyPool(parseProxies(dying.url));
    const err = await createSafeFetch({ allow, proxies: alone }).fetchPage(`${site.url}/`, { proxy: {} }).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamNetworkError);
    expect(err.code).toBe("upstream_error");
    expect(err.proxySide).toBe(true);
    expect(`${err.message} ${err.internal}`).not.toContain("hunter2");
    expect(alone.status()[0]!.status).toBe("paused");
  });

  it("no proxy for the country asked: says so, and nothing is sent", async () => {
    const pool = new ProxyPool(parseProxies(`de=${b.url}`));
    const err = await createSafeFetch({ allow, proxies: pool }).fetchPage(`${site.url}/`, { proxy: { country: "fr" } }).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamNetworkError);
    expect(err.message).toMatch(/No proxy for country fr/);
  });
});

describe("the egress guard holds through proxies", () => {
  let open: TestProxy, socks: TestProxy;
  let inside: Awaited<ReturnType<typeof startWalledSite>>;
  beforeAll(async () => {
    [open, socks] = await Promise.all([startHttpProxy({ localAddress: "127.0.0.1" }), startSocksProxy({ localAddress: "127.0.0.1" })]);
    // A private service the proxies could reach: it must never be asked.
    inside = await startWalledSite({}, { status: 200, body: "internal secrets" });
  });
  afterAll(async () => {
    await Promise.all([open?.kill(), socks?.kill(), inside?.close()]);
  });

  // The proxies sit on 127.0.0.1, which the operator allowed for them; the targets are not allowed.
  const resolver = async (name: string) => (name === "intranet.test" ? ["127.0.0.1"] : name === "metadata.test" ? ["169.254.169.254"] : ["93.184.215.14"]);

  it.each(["http", "socks5"])("a private target through a %s proxy is refused before anything reaches the proxy", async (kind) => {
    const proxy = kind === "http" ? open : socks;
    const pool = new ProxyPool(parseProxies(proxy.url));
    const pages = createSafeFetch({ allow: parseAllowList([]), proxies: pool, resolver });
    const before = proxy.asked.length;
    for (const url of [
      `http://intranet.test:${inside.port}/`,
      `https://intranet.test:${inside.port}/`,
      "http://metadata.test/latest/meta-data/",
      `http://127.0.0.1:${inside.port}/`,
      `http://[::1]:${inside.port}/`,
      `http://0x7f000001:${inside.port}/`,
    ]) {
      const err = await pages.fetchPage(url, { proxy: {} }).catch((e) => e);
      expect(err, url).toBeInstanceOf(EgressRefused);
      expect(err.code).toBe("url_not_allowed");
    }
    expect(proxy.asked.length).toBe(before);
    expect(inside.reads.direct + inside.reads.proxied).toBe(0);
    // The proxy is not blamed for a refused target.
    expect(pool.status()[0]!.status).toBe("ok");
  });

  it("a public name that redirects to a private address through the proxy: the redirect is refused before it is sent", async () => {
    const redirector = await startWalledSite({}, { status: 302, body: "", headers: { location: `http://intranet.test:${inside.port}/` } });
    try {
      const pool = new ProxyPool(parseProxies(open.url));
      // The redirector itself is allowed (the operator's intranet entry for this test); its target is not.
      const pages = createSafeFetch({ allow: parseAllowList([`127.0.0.1/32`]), proxies: pool, resolver: async (n) => (n === "intranet.test" ? ["10.0.0.7"] : ["127.0.0.1"]) });
      const err = await pages.fetchPage(`http://redirector.test:${redirector.port}/`, { proxy: {} }).catch((e) => e);
      expect(err).toBeInstanceOf(EgressRefused);
      expect(open.asked.at(-1)).toBe(`127.0.0.1:${redirector.port}`);
      expect(open.asked.some((a) => a.includes("10.0.0.7") || a.includes("intranet"))).toBe(false);
    } finally {
      await redirector.close();
    }
  });
});
