/**
 * POST /v1/map on a site whose page never answers within timeout_ms and that has no sitemap:
 * nothing to return because the deadline passed, which api.md §4 calls a 504 `timeout`, not the
 * 502 `upstream_error` of a site that failed. Neither costs anything.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { startPageServer, type PageServer } from "../helpers/page-server.ts";

describe("POST /v1/map when the page times out", () => {
  let site: PageServer;
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    site = await startPageServer();
    site.route("/stuck", (_req, res) => void setTimeout(() => res.writeHead(200, { "content-type": "text/html" }).end("<p>late</p>"), 5000));
    t = await makeApp({ pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }), env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32" } });
    key = (await t.key("acme", ["scrape"])).secret;
  });
  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  it("answers 504 timeout naming the page, and counts nothing", async () => {
    const res = await t.request("/v1/map", { method: "POST", key, json: { url: `${site.url}/stuck`, timeout_ms: 1000 } });
    expect(res.status).toBe(504);
    const err = (await res.json()).error;
    expect(err.code).toBe("timeout");
    expect(err.message).toMatch(/^Nothing to map: .*1000 ms, and timeout_ms ran out before its sitemaps were read\.$/);
    expect((await (await t.request("/v1/usage", { key })).json()).used).toBe(0);
  }, 20_000);

  it("timeout_ms bounds the whole request: page, robots.txt and sitemaps share it", async () => {
    // Every file of this site answers late; each fetch given the whole timeout_ms took 3x as long.
    const slow = await startPageServer();
    for (const path of ["/slow", "/robots.txt", "/sitemap.xml"]) {
      slow.route(path, (_req, res) => void setTimeout(() => res.writeHead(200, { "content-type": "text/html" }).end("<a href='/x'>x</a>"), 1400));
    }
    try {
      const started = Date.now();
      const res = await t.request("/v1/map", { method: "POST", key, json: { url: `${slow.url}/slow`, timeout_ms: 2000 } });
      const took = Date.now() - started;
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.links.map((l: { url: string }) => l.url)).toContain(`${slow.url}/x`);
      // The page (1.4 s) fits; robots.txt gets the 0.6 s left and the sitemap nothing more.
      expect(took).toBeLessThan(3000);
      expect(body.meta.sitemaps).toEqual([]);
    } finally {
      await slow.close();
    }
  }, 20_000);

  it("a page that cannot be reached stays a 502", async () => {
    const res = await t.request("/v1/map", { method: "POST", key, json: { url: "http://127.0.0.1:1/" } });
    expect(res.status).toBe(502);
    expect((await res.json()).error.code).toBe("upstream_error");
  });
});
