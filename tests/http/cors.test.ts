/**
 * CORS over real HTTP (#18): a Node server with QUARRY_CORS_ORIGINS answers browser preflights,
 * lets the listed origin read answers (errors included) and the rate-limit and request-id headers,
 * and a preflight counts toward no limit. Then the same from a page in real Chromium on another
 * 127.0.0.1 port, and a page on an unlisted origin that the browser must block.
 */
import { existsSync, rmSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeApp } from "../helpers/app.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

const CHROMIUM = "/usr/bin/chromium";
const EXPOSED = ["x-request-id", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"];

describe("CORS on a real server", () => {
  let server: Server;
  let allowed: PageServer; // the origin the operator lists
  let other: PageServer; // an origin it does not
  let dir: string;
  let key: string;

  beforeAll(async () => {
    allowed = await startPageServer();
    other = await startPageServer();
    for (const site of [allowed, other]) site.route("/app.html", send("text/html", "<!doctype html><title>client</title><p>client"));
    dir = tempDataDir();
    // 3 a minute per key and an IP burst of 10 that barely refills (all of this suite's requests
    // come from 127.0.0.1): a preflight that counted toward either would show at once.
    server = await startServer("node", {
      QUARRY_DATA_DIR: dir,
      QUARRY_CORS_ORIGINS: `${allowed.url}, https://spare.example`,
      QUARRY_IP_RATE: "0.01/10",
      QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":3}}',
    });
    key = createKeyCli(server.env, "acme", "search,keys").key;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await allowed?.close();
    await other?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const preflight = (path: string, method: string, origin = allowed.url) =>
    fetch(server.url + path, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": method, "access-control-request-headers": "authorization,content-type" },
    });

  it("answers a preflight from a listed origin with 204 and what the browser needs", async () => {
    const res = await preflight("/v1/search", "POST");
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(allowed.url);
    expect(res.headers.get("access-control-allow-methods")?.split(",")).toEqual(expect.arrayContaining(["GET", "POST", "DELETE"]));
    expect(res.headers.get("access-control-allow-headers")?.toLowerCase().split(",")).toEqual(["authorization", "content-type"]);
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    expect(res.headers.get("vary")).toContain("Origin");
  });

  it("gives an unlisted origin no permission", async () => {
    const res = await preflight("/v1/search", "POST", other.url);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const get = await fetch(server.url + "/v1/usage", { headers: { origin: other.url, authorization: `Bearer ${key}` } });
    expect(get.status).toBe(200);
    expect(get.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("preflights count toward no limit: 20 of them, then the per-minute limit and IP burst are whole", async () => {
    const own = createKeyCli(server.env, "limits-co", "search").key;
    for (let i = 0; i < 20; i++) expect((await preflight(i % 2 ? "/v1/usage" : "/v1/keys", "GET")).status).toBe(204);
    // 20 preflights would have emptied the IP burst of 10 and the key's 3 a minute: all 3 pass only if nothing was spent.
    const res = [];
    for (let i = 0; i < 3; i++) res.push(await fetch(server.url + "/v1/usage", { headers: { origin: allowed.url, authorization: `Bearer ${own}` } }));
    expect(res.map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await res[2].json()).used).toBe(0);
    expect(res[0].headers.get("access-control-allow-origin")).toBe(allowed.url);
    expect(res[0].headers.get("access-control-expose-headers")?.toLowerCase().split(",")).toEqual(EXPOSED);
    // The fourth is refused (429) and the refusal is readable by the origin too.
    const refused = await fetch(server.url + "/v1/usage", { headers: { origin: allowed.url, authorization: `Bearer ${own}` } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("access-control-allow-origin")).toBe(allowed.url);
  });

  describe.skipIf(!existsSync(CHROMIUM))("from a page in Chromium", () => {
    let browser: Browser;
    let fresh: string;
    beforeAll(async () => {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
      // A new account: the suite above spent this minute's allowance of the first one.
      fresh = createKeyCli(server.env, "browser-co", "search,keys").key;
    });
    afterAll(async () => {
      await browser?.close();
    });

    async function fromPage(origin: string, api: string, secret: string) {
      const page = await browser.newPage();
      await page.goto(`${origin}/app.html`);
      const result = await page.evaluate(async ({ api, secret }) => {
        const out: Record<string, unknown> = {};
        try {
          const created = await fetch(`${api}/v1/keys`, {
            method: "POST",
            headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
            body: JSON.stringify({ name: "from the browser", scopes: ["search"] }),
          });
          const body = await created.json();
          out.created = { status: created.status, requestId: created.headers.get("x-request-id"), remaining: created.headers.get("x-ratelimit-remaining"), reset: created.headers.get("x-ratelimit-reset") };
          const revoked = await fetch(`${api}/v1/keys/${body.id}`, { method: "DELETE", headers: { authorization: `Bearer ${secret}` } });
          out.revoked = { status: revoked.status, body: await revoked.json() };
          const bad = await fetch(`${api}/v1/usage`, { headers: { authorization: `Bearer qry_${"0".repeat(64)}` } });
          out.bad = { status: bad.status, code: (await bad.json()).error.code, requestId: bad.headers.get("x-request-id") };
        } catch (e) {
          out.error = String(e);
        }
        return out;
      }, { api, secret });
      await page.close();
      return result;
    }

    it("a listed origin creates, revokes and reads errors and headers with a fetch that needs a preflight", async () => {
      const r = await fromPage(allowed.url, server.url, fresh);
      expect(r.error).toBeUndefined();
      expect(r.created).toMatchObject({ status: 201, remaining: "1000" });
      expect((r.created as { requestId: string }).requestId).toMatch(/^req_[0-9A-Z]{26}$/);
      expect((r.created as { reset: string }).reset).toMatch(/^\d{4}-\d\d-01T00:00:00Z$/);
      expect(r.revoked).toMatchObject({ status: 200, body: { revoked: true } });
      expect(r.bad).toMatchObject({ status: 401, code: "invalid_key" });
    });

    it("an unlisted origin is blocked by the browser", async () => {
      const r = await fromPage(other.url, server.url, fresh);
      expect(String(r.error)).toContain("Failed to fetch");
      expect(r.created).toBeUndefined();
    });
  });
});

describe("CORS off (the default)", () => {
  it("adds no CORS headers and leaves OPTIONS a 405", async () => {
    const t = await makeApp();
    try {
      const res = await t.request("/v1/search", { method: "OPTIONS", headers: { origin: "http://127.0.0.1:1", "access-control-request-method": "POST" } });
      expect(res.status).toBe(405);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      await t.close();
    }
  });
});
