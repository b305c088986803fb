/**
 * The dashboard adds no way in (HTTP level, against a real server): its files are public, static
 * and free of secrets and account data; nothing under /dashboard takes a write or reads a cookie;
 * /v1/* still wants a Bearer key whatever cookies come along; the security headers and content
 * types are right.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DASHBOARD_CSP } from "../../core/dashboard/mod.ts";
import { createKeyCli } from "../helpers/server.ts";
import { startDashboardServer, type DashboardServer } from "./serve-with-dashboard.ts";

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const ASSETS = [
  { path: "/dashboard", type: "text/html; charset=utf-8" },
  { path: "/dashboard/", type: "text/html; charset=utf-8" },
  { path: "/dashboard/app.js", type: "text/javascript; charset=utf-8" },
  { path: "/dashboard/app.css", type: "text/css; charset=utf-8" },
];
const ACCOUNT = "zebra-account-7731";

let server: DashboardServer;
let admin: { id: string; key: string; prefix: string };
const get = (path: string, init: RequestInit = {}) => fetch(server.url + path, { ...init, headers: { "accept-encoding": "identity", ...(init.headers ?? {}) } });

/** A raw request, so the test sees the bytes on the wire (fetch would decompress). */
function raw(path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(server.url + path, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

beforeAll(async () => {
  server = await startDashboardServer();
  admin = createKeyCli(server.env, ACCOUNT, "search,research,scrape,keys") as typeof admin;
  // Some account activity, so there is data that must not leak.
  await fetch(`${server.url}/v1/keys`, { headers: { authorization: `Bearer ${admin.key}` } });
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

describe("dashboard files", () => {
  it("uses the required policy", () => {
    expect(DASHBOARD_CSP).toBe(CSP);
  });

  it.each(ASSETS)("$path is public, typed and carries the security and gateway headers", async ({ path, type }) => {
    const res = await get(path);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(type);
    expect(res.headers.get("content-security-policy")).toBe(CSP);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("cache-control")).toBe(type.startsWith("text/html") ? "no-cache" : "public, max-age=0, must-revalidate");
    expect(res.headers.get("set-cookie")).toBeNull();
    // Mounted behind the gateway: request id and the anonymous rate-limit headers.
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
    expect(res.headers.get("x-ratelimit-reset")).toMatch(/^\d{4}-\d{2}-01T00:00:00Z$/);
    const body = await res.text();
    expect(body.length).toBeGreaterThan(500);
    // Nothing secret or account-specific: it is the same file for everyone.
    expect(body).not.toMatch(/qry_[0-9a-f]{64}/);
    for (const leak of [admin.key, admin.id, admin.prefix, ACCOUNT]) expect(body).not.toContain(leak);
  });

  it("is the same for everyone: a key or cookies change nothing", async () => {
    for (const { path } of ASSETS) {
      const plain = await (await get(path)).text();
      const withKey = await (await get(path, { headers: { authorization: `Bearer ${admin.key}`, cookie: `quarry.dashboard.key=${admin.key}; session=1` } })).text();
      expect(withKey).toBe(plain);
    }
  });

  it("the page loads only its own assets, with no inline script or style", async () => {
    const html = await (await get("/dashboard")).text();
    const urls = [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1]);
    expect(urls.length).toBeGreaterThanOrEqual(2);
    for (const u of urls) expect(u).toMatch(/^(\/dashboard\/app\.(js|css)\?v=[0-9a-f]{8}|#\/\w+|data:,|\/docs|\/openapi\.json)$/);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // every script has a src
    expect(html).not.toMatch(/<style/i);
    expect(html).not.toMatch(/\sstyle=/i);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/https?:\/\//);
    // No form posts anywhere, and the secret fields have no name to be serialised under.
    expect(html).not.toMatch(/<form[^>]*\saction=/i);
    expect(html).not.toMatch(/<(input|textarea)[^>]*\sname=/i);
  });

  it("the script talks only to the public API on its own origin, with Bearer and without cookies", async () => {
    const js = await (await get("/dashboard/app.js")).text();
    const css = await (await get("/dashboard/app.css")).text();
    expect(js.match(/https?:\/\/[^\s"']+/g) ?? []).toEqual(["http://www.w3.org/2000/svg"]); // a namespace, not a fetch
    expect(css).not.toMatch(/https?:|url\(|@import/);
    expect(js).toContain('"Bearer " + key');
    expect(js).toContain('credentials: "omit"');
    expect(js).not.toMatch(/document\.cookie|localStorage|innerHTML|outerHTML|insertAdjacentHTML|eval\(|new Function/);
    const paths = [...js.matchAll(/call\("(GET|POST|DELETE)", "([^"]+)"/g)].map((m) => `${m[1]} ${m[2]}`);
    expect(new Set(paths)).toEqual(new Set(["GET /v1/keys", "POST /v1/keys", "DELETE /v1/keys/", "GET /v1/usage", "GET /v1/usage/daily", "GET /v1/collections", "GET /health"]));
  });

  it("the script is valid JavaScript", async () => {
    const js = await (await get("/dashboard/app.js")).text();
    const dir = mkdtempSync(join(tmpdir(), "quarry-dash-js-"));
    try {
      const file = join(dir, "app.mjs");
      writeFileSync(file, js);
      const r = spawnSync(process.execPath, ["--check", file], { encoding: "utf8" });
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("caches versioned assets for good and revalidates the rest", async () => {
    const html = await (await get("/dashboard")).text();
    for (const name of ["app.js", "app.css"]) {
      const url = new RegExp(`/dashboard/${name.replace(".", "\\.")}\\?v=([0-9a-f]{8})`).exec(html)!;
      const res = await get(url[0]);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(res.headers.get("etag")).toBe(`W/"${url[1]}"`);
      const again = await get(`/dashboard/${name}`, { headers: { "if-none-match": `W/"${url[1]}"` } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe("");
      expect(again.headers.get("content-security-policy")).toBe(CSP);
      const stale = await get(`/dashboard/${name}?v=00000000`);
      expect(stale.headers.get("cache-control")).toBe("public, max-age=0, must-revalidate");
    }
  });

  it("is small, and smaller gzipped", async () => {
    let plain = 0;
    let zipped = 0;
    for (const { path } of ASSETS.slice(1)) {
      const id = await raw(path, { "accept-encoding": "identity" });
      const gz = await raw(path, { "accept-encoding": "gzip, deflate, br" });
      expect(id.headers["content-encoding"]).toBeUndefined();
      expect(gz.headers["content-encoding"]).toBe("gzip");
      expect(gz.headers.vary).toBe("Accept-Encoding");
      expect(gunzipSync(gz.body).equals(id.body)).toBe(true);
      plain += id.body.length;
      zipped += gz.body.length;
    }
    // The per-day chart (#16) added about 6 KB, 2 KB gzipped.
    expect(plain).toBeLessThan(56 * 1024);
    expect(zipped).toBeLessThan(16 * 1024);
  });

  it("answers HEAD without a body", async () => {
    const res = await get("/dashboard/app.css", { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await res.text()).toBe("");
  });

  it("has nothing else under /dashboard", async () => {
    for (const path of ["/dashboard/index.html", "/dashboard/../v1/keys", "/dashboard/keys", "/dashboard/app.js.map", "/dashboardx"]) {
      const res = await get(path, { headers: { cookie: `quarry.dashboard.key=${admin.key}` } });
      if (path === "/dashboard/../v1/keys") {
        // fetch normalises this to /v1/keys: still needs a Bearer key.
        expect(res.status).toBe(401);
        continue;
      }
      expect(res.status, path).toBe(404);
      expect((await res.json()).error.code).toBe("not_found");
    }
  });
});

describe("no new way in", () => {
  const cookies = ["quarry.dashboard.key=x", "session=admin; auth=1"];

  it.each(["POST", "PUT", "PATCH", "DELETE", "OPTIONS"])("%s under /dashboard is refused (405), even with a key and cookies", async (method) => {
    for (const path of ["/dashboard", "/dashboard/", "/dashboard/app.js", "/dashboard/keys", "/dashboard/v1/keys"]) {
      const res = await get(path, {
        method,
        headers: { authorization: `Bearer ${admin.key}`, cookie: `quarry.dashboard.key=${admin.key}`, "content-type": "application/json" },
        body: method === "OPTIONS" ? undefined : JSON.stringify({ name: "sneaky", scopes: ["keys"] }),
      });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get("allow")).toBe("GET, HEAD");
      expect((await res.json()).error.code).toBe("method_not_allowed");
    }
    // Nothing was created.
    const list = await (await fetch(`${server.url}/v1/keys`, { headers: { authorization: `Bearer ${admin.key}` } })).json();
    expect(list.keys.map((k: { name: string }) => k.name)).not.toContain("sneaky");
  });

  it("/v1/* refuses requests without Bearer whatever cookies are set", async () => {
    const cookieSets = [...cookies, `quarry.dashboard.key=${admin.key}`, `authorization=Bearer ${admin.key}`, `Authorization=Bearer%20${admin.key}; key=${admin.key}`];
    const calls: Array<[string, string, unknown?]> = [
      ["GET", "/v1/keys"],
      ["POST", "/v1/keys", { name: "via-cookie", scopes: ["search"] }],
      ["DELETE", `/v1/keys/${admin.id}`],
      ["GET", "/v1/usage"],
      ["POST", "/v1/test/echo", { query: "x" }],
    ];
    for (const cookie of cookieSets) {
      for (const [method, path, body] of calls) {
        const res = await fetch(server.url + path, {
          method,
          headers: { cookie, ...(body ? { "content-type": "application/json" } : {}), referer: `${server.url}/dashboard`, origin: server.url },
          body: body ? JSON.stringify(body) : undefined,
        });
        expect(res.status, `${method} ${path} with ${cookie}`).toBe(401);
        expect((await res.json()).error.code).toBe("missing_auth");
      }
    }
    // The admin key is untouched and works with Bearer.
    const ok = await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${admin.key}`, cookie: "session=nonsense" } });
    expect(ok.status).toBe(200);
  });

  it("the key in a query string is not a way in either", async () => {
    for (const q of [`key=${admin.key}`, `api_key=${admin.key}`, `authorization=Bearer%20${admin.key}`]) {
      const res = await fetch(`${server.url}/v1/keys?${q}`);
      expect(res.status).toBe(401);
    }
  });

  it("no dashboard response sets a cookie", async () => {
    for (const { path } of ASSETS) {
      for (const method of ["GET", "HEAD", "POST"]) {
        const res = await get(path, { method });
        expect(res.headers.get("set-cookie"), `${method} ${path}`).toBeNull();
      }
    }
  });
});
