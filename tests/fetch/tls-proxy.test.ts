/**
 * The Node fetcher over TLS (the guarded lookup also runs under tls.connect) and through a proxy
 * (HTTP forwarding, CONNECT tunnels, NO_PROXY, resolve-and-check before anything reaches the
 * proxy). Certificates are made by openssl at test time (tests/fetch/helpers.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { proxyFromEnv } from "../../adapters/fetch/proxy.ts";
import { createSafeFetch } from "../../adapters/fetch/safe-fetch.ts";
import type { SafeFetchOptions } from "../../adapters/fetch/types.ts";
import { parseAllowList } from "../../core/net/allow-list.ts";
import { EgressRefused, UpstreamNetworkError } from "../../core/net/fetch-errors.ts";
import { makeCertificates, mapResolver, rejection, startProxy, startServer, type Handler, type TestServer } from "./helpers.ts";

const echo: Handler = (req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ url: req.url, host: req.headers.host, sni: (req.socket as { servername?: string }).servername ?? null }));
};

let plain: TestServer;
let secure: TestServer;
let ca = "";
const resolver = mapResolver({ "allowed.test": ["127.0.0.1"], "evil.test": ["127.0.0.1"] });
const json = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));

beforeAll(async () => {
  plain = await startServer("127.0.0.1", echo);
  const tls = makeCertificates();
  ca = tls.ca;
  secure = await startServer("127.0.0.1", echo, { key: tls.key, cert: tls.cert });
});

afterAll(async () => {
  await plain?.close();
  await secure?.close();
});

describe("https, direct", () => {
  it("fetches an allowed name with SNI and verification, through the guarded lookup", async () => {
    const safe = createSafeFetch({ allow: parseAllowList("allowed.test"), resolver, ca });
    const page = await safe.fetchPage(`https://allowed.test:${secure!.port}/x?y=1`);
    expect(json(page.body)).toEqual({ url: "/x?y=1", host: `allowed.test:${secure!.port}`, sni: "allowed.test" });
  });

  it("refuses a name resolving to loopback before any TLS handshake", async () => {
    const before = secure!.connections;
    const safe = createSafeFetch({ allow: parseAllowList(""), resolver, ca });
    await expect(safe.fetchPage(`https://evil.test:${secure!.port}/`)).rejects.toBeInstanceOf(EgressRefused);
    expect(secure!.connections).toBe(before);
    expect(secure!.requests.filter((r) => r.includes("evil"))).toEqual([]);
  });

  it("rejects a certificate it cannot verify", async () => {
    const safe = createSafeFetch({ allow: parseAllowList("allowed.test"), resolver });
    const err = await rejection(() => safe.fetchPage(`https://allowed.test:${secure!.port}/`));
    expect(err).toBeInstanceOf(UpstreamNetworkError);
    expect(err.message).toContain("certificate");
  });
});

describe("through a proxy", () => {
  const options = (proxy: SafeFetchOptions["proxy"], allow = "allowed.test"): SafeFetchOptions => ({
    allow: parseAllowList(allow),
    resolver,
    proxy,
    ca: ca || undefined,
  });

  it("forwards http in absolute form, with proxy credentials", async () => {
    const proxy = await startProxy();
    try {
      const url = new URL(proxy.origin);
      url.username = "ops";
      url.password = "s3cret";
      const page = await createSafeFetch(options(url.href)).fetchPage(`http://allowed.test:${plain.port}/p?q=1`);
      expect(json(page.body).url).toBe("/p?q=1");
      expect(proxy.requests).toEqual([`GET http://allowed.test:${plain.port}/p?q=1`]);
      expect(proxy.headers[0]["proxy-authorization"]).toBe(`Basic ${btoa("ops:s3cret")}`);
      expect(page.remoteAddress).toBeUndefined();
    } finally {
      await proxy.close();
    }
  });

  it("tunnels https with CONNECT, TLS end to end", async () => {
    const proxy = await startProxy();
    try {
      const page = await createSafeFetch(options({ https: proxy.origin })).fetchPage(`https://allowed.test:${secure!.port}/t`);
      expect(json(page.body)).toMatchObject({ url: "/t", sni: "allowed.test" });
      expect(proxy.connects).toEqual([`allowed.test:${secure!.port}`]);
      expect(proxy.requests).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it("resolves and checks before the proxy hears anything", async () => {
    const proxy = await startProxy();
    const before = plain.requests.length;
    try {
      const safe = createSafeFetch(options(proxy.origin, ""));
      for (const url of [
        `http://evil.test:${plain.port}/`,
        `https://evil.test:${plain.port}/`,
        `http://127.0.0.1:${plain.port}/`,
        `http://localhost:${plain.port}/`,
        `http://[::1]:${plain.port}/`,
      ]) {
        await expect(safe.fetchPage(url), url).rejects.toBeInstanceOf(EgressRefused);
      }
      // A name we cannot resolve ourselves is not handed to the proxy either (fail closed).
      await expect(safe.fetchPage("http://unknown.test/")).rejects.toBeInstanceOf(EgressRefused);
      expect(proxy.connections).toBe(0);
      expect(plain.requests.length).toBe(before);
    } finally {
      await proxy.close();
    }
  });

  it("bypasses the proxy for NO_PROXY hosts", async () => {
    const proxy = await startProxy();
    try {
      const safe = createSafeFetch(options({ http: proxy.origin, noProxy: "example.org, .test" }));
      const page = await safe.fetchPage(`http://allowed.test:${plain.port}/direct`);
      expect(json(page.body).url).toBe("/direct");
      expect(page.remoteAddress).toBe("127.0.0.1");
      expect(proxy.connections).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it("reads the environment and refuses proxies it cannot use", () => {
    expect(proxyFromEnv({})).toBeUndefined();
    expect(proxyFromEnv({ HTTPS_PROXY: "http://p:3128", NO_PROXY: "a.test" })).toEqual({ http: undefined, https: "http://p:3128", noProxy: "a.test" });
    expect(proxyFromEnv({ http_proxy: "http://lower:1", HTTP_PROXY: "http://upper:1" })?.http).toBe("http://lower:1");
    expect(() => createSafeFetch(options("https://proxy.example:443"))).toThrow(/not supported/);
    expect(() => createSafeFetch(options("socks5://proxy.example:1080"))).toThrow(/not supported/);
  });
});
