/**
 * Allowed fetches (the test server is on the allow-list): bytes untouched, decoding, the caps,
 * the deadline and the User-Agent, on both fetchers.
 */
import { gzipSync, deflateSync, deflateRawSync, brotliCompressSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetchPortable } from "../../adapters/fetch/portable.ts";
import { createSafeFetch, fetchPage } from "../../adapters/fetch/safe-fetch.ts";
import { quarryUserAgent, type SafeFetch, type SafeFetchOptions } from "../../adapters/fetch/types.ts";
import { parseAllowList } from "../../core/net/allow-list.ts";
import { BodyTooLarge, EgressRefused, FetchTimeout, UpstreamNetworkError } from "../../core/net/fetch-errors.ts";
import { mapResolver, rejection, startServer, type TestServer } from "./helpers.ts";

const HTML = Buffer.from("<!doctype html><title>héllo</title><p>wörld ".repeat(200) + "</p>", "utf8");
// "café" in ISO-8859-1 and "日本" in Shift_JIS: must come back byte for byte.
const LATIN1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x93, 0xfa, 0x96, 0x7b]);
const BOMB_SIZE = 50 * 1024 * 1024;
let bomb: Buffer;
let pages: TestServer;

beforeAll(async () => {
  bomb = gzipSync(Buffer.alloc(BOMB_SIZE), { level: 9 });
  pages = await startServer("127.0.0.1", (req, res) => {
    const url = new URL(req.url!, "http://x");
    switch (url.pathname) {
      case "/latin1":
        res.writeHead(200, { "content-type": "text/html; charset=iso-8859-1" });
        return res.end(LATIN1);
      case "/gzip":
        res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-encoding": "gzip" });
        return res.end(gzipSync(HTML));
      case "/deflate":
        res.writeHead(200, { "content-type": "text/html", "content-encoding": "deflate" });
        return res.end(deflateSync(HTML));
      case "/deflate-raw":
        res.writeHead(200, { "content-type": "text/html", "content-encoding": "deflate" });
        return res.end(deflateRawSync(HTML));
      case "/br":
        res.writeHead(200, { "content-type": "text/html", "content-encoding": "br" });
        return res.end(brotliCompressSync(HTML));
      case "/bomb":
        res.writeHead(200, { "content-type": "text/html", "content-encoding": "gzip", "content-length": bomb.length });
        return res.end(bomb);
      case "/big":
        res.writeHead(200, { "content-type": "text/plain" });
        return res.end(Buffer.alloc(2 * 1024 * 1024, 0x78));
      case "/exact":
        return res.end(Buffer.alloc(1024, 0x78));
      case "/slow-headers":
        return; // never answers
      case "/slow-body":
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("first bytes");
        return; // never finishes
      case "/echo":
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ method: req.method, headers: req.headers }));
      case "/see-other":
        res.writeHead(303, { location: "/echo" });
        return res.end();
      case "/elsewhere":
        res.writeHead(302, { location: `http://127.0.0.1:${pages.port}/echo` });
        return res.end();
      case "/missing":
        res.writeHead(404, { "content-type": "text/plain" });
        return res.end("not here");
      case "/empty":
        res.writeHead(204);
        return res.end();
      case "/corrupt":
        res.writeHead(200, { "content-encoding": "gzip" });
        return res.end(Buffer.from("this is not gzip at all, not even close"));
      default:
        res.end(HTML);
    }
  });
});

afterAll(() => pages?.close());

const VARIANTS: { name: string; make: (o: SafeFetchOptions) => SafeFetch }[] = [
  { name: "node", make: (o) => createSafeFetch(o) },
  { name: "portable", make: (o) => createSafeFetchPortable(o) },
];
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe.each(VARIANTS)("$name fetcher, allowed server", ({ name, make }) => {
  const safe = (extra: Partial<SafeFetchOptions> = {}) => make({ allow: parseAllowList("127.0.0.1/32"), ...extra });
  const at = (path: string) => `${pages.origin}${path}`;

  it("returns the bytes untouched, whatever the charset", async () => {
    const page = await safe().fetchPage(at("/latin1"));
    expect(page.status).toBe(200);
    expect(Buffer.from(page.body).equals(LATIN1)).toBe(true);
    expect(page.contentType).toBe("text/html; charset=iso-8859-1");
    expect(page).toMatchObject({ url: at("/latin1"), finalUrl: at("/latin1"), redirects: [] });
  });

  it.each(["/gzip", "/deflate", "/deflate-raw", "/br"])("decodes %s", async (path) => {
    const page = await safe().fetchPage(at(path));
    expect(Buffer.from(page.body).equals(HTML)).toBe(true);
  });

  it("sends the honest User-Agent, even when the caller sets another", async () => {
    const page = await safe().fetchPage(at("/echo"), { headers: { "user-agent": "Mozilla/5.0 (pretend)" } });
    const ua = JSON.parse(text(page.body)).headers["user-agent"];
    expect(ua).toBe(quarryUserAgent());
    expect(ua).toMatch(/^QuarryBot\/\S+ \(\+https:\/\/github\.com\/quarry\/quarry; self-hosted search API\)$/);
    const custom = await safe({ userAgent: "QuarryBot/9 (+https://ops.example)" }).fetchPage(at("/echo"));
    expect(JSON.parse(text(custom.body)).headers["user-agent"]).toBe("QuarryBot/9 (+https://ops.example)");
  });

  it("cuts an oversize body off with BodyTooLarge", async () => {
    const err = await rejection(() => safe({ maxBytes: 1024 * 1024 }).fetchPage(at("/big")));
    expect(err).toBeInstanceOf(BodyTooLarge);
    expect(err.code).toBe("unsupported_content");
    expect(err.message).toContain("1 MiB");
    const exact = await safe({ maxBytes: 1024 }).fetchPage(at("/exact"));
    expect(exact.body.byteLength).toBe(1024);
  });

  it("stops a gzip bomb after the cap, with memory bounded", async () => {
    expect(bomb.length).toBeLessThan(BOMB_SIZE / 500);
    const cap = 10 * 1024 * 1024;
    const before = process.memoryUsage();
    const started = Date.now();
    const err = await rejection(() => safe().fetchPage(at("/bomb")));
    expect(err).toBeInstanceOf(BodyTooLarge);
    // Decoding stopped within a few chunks of the cap, far from the 50 MB inside.
    expect(err.bytesSeen as number).toBeGreaterThan(cap);
    expect(err.bytesSeen as number).toBeLessThan(cap + 1024 * 1024);
    const after = process.memoryUsage();
    expect(after.arrayBuffers - before.arrayBuffers).toBeLessThan(40 * 1024 * 1024);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("times out a server that never answers, within the deadline", async () => {
    for (const path of ["/slow-headers", "/slow-body"]) {
      const started = Date.now();
      const err = await rejection(() => safe({ timeoutMs: 300 }).fetchPage(at(path)));
      expect(err, path).toBeInstanceOf(FetchTimeout);
      expect(err.status).toBe(504);
      expect(Date.now() - started).toBeLessThan(2000);
    }
    const perCall = await rejection(() => safe().fetchPage(at("/slow-headers"), { timeoutMs: 200 }));
    expect(perCall).toBeInstanceOf(FetchTimeout);
  });

  it("passes the caller's abort through as an abort, not a timeout", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const err = await rejection(() => safe().fetchPage(at("/slow-headers"), { signal: controller.signal }));
    expect(err).not.toBeInstanceOf(FetchTimeout);
    expect(err.name).toBe("AbortError");
  });

  it("returns error statuses and empty bodies as pages", async () => {
    const missing = await safe().fetchPage(at("/missing"));
    expect(missing.status).toBe(404);
    expect(text(missing.body)).toBe("not here");
    const empty = await safe().fetchPage(at("/empty"));
    expect(empty.status).toBe(204);
    expect(empty.body.byteLength).toBe(0);
  });

  it("turns a POST into a GET on 303 and drops credentials across origins", async () => {
    const seeOther = await safe().fetchPage(at("/see-other"), { method: "POST", body: "a=1", headers: { "content-type": "text/plain" } });
    expect(JSON.parse(text(seeOther.body)).method).toBe("GET");
    expect(seeOther.redirects).toEqual([at("/see-other")]);
    if (name === "node") {
      const byName = make({ allow: parseAllowList("allowed.test,127.0.0.1/32"), resolver: mapResolver({ "allowed.test": ["127.0.0.1"] }) });
      const page = await byName.fetchPage(`http://allowed.test:${pages.port}/elsewhere`, { headers: { authorization: "Bearer x", cookie: "a=b" } });
      const headers = JSON.parse(text(page.body)).headers;
      expect(headers.authorization).toBeUndefined();
      expect(headers.cookie).toBeUndefined();
      expect(page.finalUrl).toBe(`http://127.0.0.1:${pages.port}/echo`);
    }
  });

  it("answers a standard Response through the FetchPort face", async () => {
    const res = await safe()(at("/gzip"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(Buffer.from(await res.arrayBuffer()).equals(HTML)).toBe(true);
    const redirected = await safe()(new Request(at("/see-other"), { method: "POST", body: "x" }));
    expect(redirected.url).toBe(at("/echo"));
    expect(redirected.redirected).toBe(true);
  });

  it("reports network failures as UpstreamNetworkError", async () => {
    const closed = await startServer("127.0.0.1", () => {});
    const port = closed.port;
    await closed.close();
    const err = await rejection(() => safe().fetchPage(`http://127.0.0.1:${port}/`));
    expect(err).toBeInstanceOf(UpstreamNetworkError);
    expect(err.status).toBe(502);
    // A name that does not resolve answers exactly like a private one (#19: no probing internal DNS).
    const unknown = await rejection(() => safe({ resolver: mapResolver({}) }).fetchPage("http://nowhere.test/"));
    expect(unknown).toBeInstanceOf(EgressRefused);
    const private_ = await rejection(() => safe({ resolver: mapResolver({ "db.test": ["10.0.0.7"] }) }).fetchPage("http://db.test/"));
    expect([unknown.status, unknown.code, unknown.message]).toEqual([private_.status, private_.code, private_.message]);
  });

  // The node fetcher decodes bodies itself (node-body.ts); the portable one gets them decoded by the runtime's fetch.
  if (name === "node") it("reports a corrupt compressed body", async () => {
    const err = await rejection(() => safe().fetchPage(at("/corrupt")));
    expect(err).toBeInstanceOf(UpstreamNetworkError);
  });
});

describe("node fetcher specifics", () => {
  it("connects to the address the lookup checked (a name the system cannot resolve)", async () => {
    const calls: string[] = [];
    const resolver = async (host: string) => (calls.push(host), ["127.0.0.1"]);
    const page = await fetchPage(`http://allowed.test:${pages.port}/echo`, { allow: parseAllowList("allowed.test"), resolver });
    expect(calls).toEqual(["allowed.test"]);
    expect(page.remoteAddress).toBe("127.0.0.1");
    expect(JSON.parse(text(page.body)).headers.host).toBe(`allowed.test:${pages.port}`);
  });

  it("uses the system resolver by default (an allowed localhost)", async () => {
    const page = await fetchPage(`http://localhost:${pages.port}/latin1`, { allow: parseAllowList("localhost") });
    expect(Buffer.from(page.body).equals(LATIN1)).toBe(true);
  });
});
