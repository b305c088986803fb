/**
 * One egress policy for every outbound request (core/net/egress.ts): configured upstreams go out
 * as configured; a URL an upstream hands back (caption tracks, redirects, an LLM's redirect) passes
 * the same connect-time guard as page fetches. A forbidden listener on 127.0.0.3 counts every
 * connection: it must see none. Over real HTTP, through the real app where it matters.
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer, type Server as TcpServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { createEgress, guardedFetch } from "../../core/net/egress.ts";
import { makeApp } from "../helpers/app.ts";
import { ROOT } from "../helpers/server.ts";
import { mapResolver } from "./helpers.ts";

const FIX = (p: string) => readFileSync(`${ROOT}/tests/fixtures/upstream/${p}`, "utf8");

let forbidden: TcpServer;
let forbiddenPort = 0;
const hits: string[] = [];
let upstream: Server;
let upstreamUrl = "";
/** Routes of the stand-in upstream (a YouTube, a model endpoint), set per test. */
const routes: Record<string, (url: URL) => { status: number; headers?: Record<string, string>; body?: string }> = {};

beforeAll(async () => {
  forbidden = createTcpServer((s) => {
    hits.push(String(s.localPort));
    s.destroy();
  });
  await new Promise<void>((r) => forbidden.listen(0, "127.0.0.3", () => r()));
  forbiddenPort = (forbidden.address() as { port: number }).port;
  upstream = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const route = Object.keys(routes).find((p) => url.pathname.startsWith(p));
    req.resume();
    if (!route) return res.writeHead(404).end();
    const out = routes[route]!(url);
    res.writeHead(out.status, { "content-type": "application/json", ...out.headers }).end(out.body ?? "");
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", () => r()));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => upstream.close(() => r()));
  await new Promise<void>((r) => forbidden.close(() => r()));
});

const resolver = () => mapResolver({ "evil.test": ["127.0.0.3"], "public.test": ["93.184.216.34"] });
const guarded = () => createSafeFetch({ allow: parseAllowList([]), resolver: resolver() });

describe("createEgress", () => {
  const egress = () => createEgress({ raw: (i, init) => fetch(i, init), guarded: guardedFetch(guarded()), upstreams: [upstreamUrl] });

  it("lets a configured upstream through as configured, although it is on loopback", async () => {
    routes["/ok"] = () => ({ status: 200, body: '{"fine":true}' });
    const res = await egress()(`${upstreamUrl}/ok`);
    expect(await res.json()).toEqual({ fine: true });
  });

  it("sends any other URL through the guard: private literals, names that resolve to them, IPv6 and odd spellings", async () => {
    for (const url of [`http://127.0.0.3:${forbiddenPort}/x`, `http://evil.test:${forbiddenPort}/x`, `http://[::ffff:127.0.0.3]:${forbiddenPort}/`, `http://2130706435:${forbiddenPort}/`, `http://localhost:${forbiddenPort}/`]) {
      await expect(egress()(url), url).rejects.toMatchObject({ code: "url_not_allowed" });
    }
    expect(hits).toEqual([]);
  });

  it("follows a configured upstream's redirects within its origin, and puts one that leaves it through the guard", async () => {
    routes["/hop"] = () => ({ status: 302, headers: { location: "/ok" } });
    routes["/away"] = () => ({ status: 302, headers: { location: `http://127.0.0.3:${forbiddenPort}/metadata` } });
    routes["/away-by-name"] = () => ({ status: 307, headers: { location: `http://evil.test:${forbiddenPort}/metadata` } });
    expect((await egress()(`${upstreamUrl}/hop`)).status).toBe(200);
    await expect(egress()(`${upstreamUrl}/away`)).rejects.toMatchObject({ code: "url_not_allowed" });
    await expect(egress()(`${upstreamUrl}/away-by-name`, { method: "POST", body: "{}" })).rejects.toMatchObject({ code: "url_not_allowed" });
    expect(hits).toEqual([]);
  });
});

describe("URLs upstreams hand back, through the app", () => {
  it("video: caption tracks listed on another host or a private address are never fetched; the result has no transcript", async () => {
    const player = FIX("youtube/innertube_web_player_2isYuQZMbdU_captions.json")
      .replaceAll("https://www.youtube.com/api/timedtext", `http://127.0.0.3:${forbiddenPort}/api/timedtext`);
    const playerByName = FIX("youtube/innertube_web_player_2isYuQZMbdU_captions.json")
      .replaceAll("https://www.youtube.com/api/timedtext", `http://evil.test:${forbiddenPort}/api/timedtext`);
    let calls = 0;
    routes["/youtubei/v1/search"] = () => ({ status: 200, body: FIX("youtube/innertube_web_search_test_videos.json") });
    routes["/youtubei/v1/player"] = () => ({ status: 200, body: calls++ % 2 ? player : playerByName });
    const t = await makeApp({ env: { QUARRY_YOUTUBE_URL: upstreamUrl }, pages: guarded() });
    t.clock.now = () => Date.now();
    try {
      const key = (await t.key("acme", ["search"])).secret;
      const res = await t.request("/v1/video/search", { method: "POST", key, json: { query: "test video", max_results: 4 } });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.results.length).toBeGreaterThan(0);
      expect(body.results.every((r: { transcript_snippet: string | null }) => r.transcript_snippet === null)).toBe(true);
      expect(calls).toBeGreaterThan(0);
      expect(hits).toEqual([]);
    } finally {
      await t.close();
    }
  }, 30_000);

  it("research: a model endpoint that redirects elsewhere is not followed there; the report falls back to extractive", async () => {
    routes["/v1/chat/completions"] = () => ({ status: 307, headers: { location: `http://127.0.0.3:${forbiddenPort}/v1/chat/completions` } });
    routes["/search"] = () => ({ status: 200, body: FIX("searxng/search_format_json_synthetic.json") });
    const t = await makeApp({
      env: { QUARRY_SEARXNG_URL: upstreamUrl, QUARRY_DUCKDUCKGO_URL: upstreamUrl, QUARRY_WIKIPEDIA_URL: upstreamUrl, QUARRY_LLM_URL: `${upstreamUrl}/v1` },
      pages: guarded(),
    });
    t.clock.now = () => Date.now();
    try {
      const key = (await t.key("acme", ["research"])).secret;
      const res = await t.request("/v1/research", { method: "POST", key, json: { query: "blue tack", tier: "basic" } });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.meta.synthesis).toBe("extractive");
      expect(hits).toEqual([]);
    } finally {
      await t.close();
    }
  }, 30_000);
});
