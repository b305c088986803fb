/** POST /v1/search end to end over a replay server of the real recorded engine answers, with faults. */
import * as v from "valibot";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { countTokens } from "../../core/budget/tokens.ts";
import { SearchResponseSchema } from "../../core/operations/search/schema.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { article } from "../helpers/articles.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { replayEnv, startReplayServer, type ReplayServer } from "../helpers/replay-server.ts";

describe("POST /v1/search", () => {
  let replay: ReplayServer;
  let site: PageServer;
  let t: TestApp;
  let key: string;
  const searchReq = (json: unknown) => t.request("/v1/search", { method: "POST", key, json });

  beforeAll(async () => {
    replay = await startReplayServer();
    site = await startPageServer();
    site.route("/gaming", send("text/html", article("042bb7b5fedab6eac7db576522b89b93904c237d344bcbe14a6a5ab7f7335856").html));
    site.route("/slow", (_req, res) => setTimeout(() => res.writeHead(200, { "content-type": "text/html" }).end("<p>late</p>"), 20_000));
  });
  afterAll(async () => {
    await replay.close();
    await site.close();
  });
  afterEach(async () => {
    for (const k of Object.keys(replay.faults)) delete replay.faults[k];
    for (const k of Object.keys(replay.bodies)) delete replay.bodies[k];
    await t?.close();
  });

  async function app() {
    t = await makeApp({ env: replayEnv(replay.url), pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }), clock: undefined, options: { services: { deadlines: { search: 6_000 } } } });
    t.clock.now = () => Date.now();
    key = (await t.key("acme", ["search"])).secret;
  }

  it("health follows real outcomes: unknown before traffic, failing (and degraded) after a failed call, named in services.backends", async () => {
    await app();
    const fresh = await (await t.request("/health")).json();
    expect(fresh.status).toBe("ok");
    for (const id of ["duckduckgo", "wikipedia", "brave", "searxng"]) expect(fresh.backends[id]).toEqual({ status: "unknown", success_rate: 0, calls: 0 });
    replay.faults.duckduckgo = "500";
    expect((await searchReq({ query: "blue tack" })).status).toBe(200);
    const after = await (await t.request("/health")).json();
    expect(after.status).toBe("degraded");
    expect(after).not.toHaveProperty("backends");
    expect(after.services.backends.failing).toEqual(["duckduckgo"]);
    expect(after.services.backends.detail.duckduckgo).toEqual({ status: "failing", success_rate: 0, calls: 1 });
    expect(after.services.backends.detail.wikipedia).toEqual({ status: "ok", success_rate: 1, calls: 1 });
  });

  it("keeps a partial answer (an engine failed) cached for a minute, a full one for ten: a recovered engine is asked again soon", async () => {
    await app();
    // These tests read the real time (engines' timeouts); the cache's minutes pass by an offset.
    let later = 0;
    t.clock.now = () => Date.now() + later;
    replay.faults.duckduckgo = "500";
    const first = await (await searchReq({ query: "blue tack" })).json();
    expect(first.meta.backends.duckduckgo.status).toBe("error");
    expect((await (await searchReq({ query: "blue tack" })).json()).meta.cached).toBe(true);
    delete replay.faults.duckduckgo;
    later += 61_000;
    const fresh = await (await searchReq({ query: "blue tack" })).json();
    expect(fresh.meta).toMatchObject({ cached: false, backends: { duckduckgo: { status: "ok" } } });
    // The full answer that replaced it stays for ten minutes.
    later += 9 * 60_000;
    expect((await (await searchReq({ query: "blue tack" })).json()).meta.cached).toBe(true);
  });

  it("merges the recorded answers of four engines into one ranked, deduplicated list with honest status", async () => {
    await app();
    const res = await searchReq({ query: "blue tack", max_results: 10 });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(v.safeParse(SearchResponseSchema, body).success).toBe(true);
    expect(Object.keys(body.meta.backends).sort()).toEqual(["brave", "duckduckgo", "searxng", "wikipedia"]);
    for (const id of ["brave", "duckduckgo", "searxng", "wikipedia"]) expect(body.meta.backends[id].status).toBe("ok");
    expect(body.results.length).toBe(10);
    const scores = body.results.map((r: { score: number }) => r.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(scores.every((s: number) => s >= 0 && s <= 1)).toBe(true);
    const urls = body.results.map((r: { url: string }) => r.url.replace(/^https?:\/\/(www\.)?/, "").replace(/\/$/, ""));
    expect(new Set(urls).size).toBe(urls.length);
    expect(body.results.every((r: { excerpt: null }) => r.excerpt === null)).toBe(true);
    expect(body.meta).toMatchObject({ query: "blue tack", results_count: 10, tokens_used: 0, cached: false });
    const again = await (await searchReq({ query: "blue tack", max_results: 10 })).json();
    expect(again.meta.cached).toBe(true);
    const health = await (await t.request("/health")).json();
    const hosts = new Set(body.results.map((r: { url: string }) => new URL(r.url).hostname));
    expect(health.services.intelligence.sources_tracked).toBeGreaterThanOrEqual(hosts.size);
    expect(health.backends.duckduckgo).toEqual({ status: "ok", success_rate: 1, calls: 1 });
    expect(health.services.metasearch).toMatchObject({ status: "ok", url: replay.baseFor("searxng") });
    expect(Number.isInteger(health.services.metasearch.latency_ms)).toBe(true);
  });

  it("answers inside the deadline when one engine hangs, reporting it, with the others' results", async () => {
    await app();
    replay.faults.duckduckgo = "hang";
    const t0 = Date.now();
    const body = await (await searchReq({ query: "blue tack", backends: ["duckduckgo", "wikipedia", "brave"] })).json();
    expect(Date.now() - t0).toBeLessThan(7_000);
    expect(body.meta.backends.duckduckgo.status).toBe("timeout");
    expect(body.meta.backends.wikipedia.status).toBe("ok");
    expect(body.meta.backends.searxng.status).toBe("skipped");
    expect(body.results.length).toBeGreaterThan(0);
  }, 15_000);

  it("reports 500, 429 (then suspends), CAPTCHA and garbage per engine, and still answers", async () => {
    await app();
    Object.assign(replay.faults, { duckduckgo: "captcha", wikipedia: "500", brave: "429" });
    const body = await (await searchReq({ query: "blue tack" })).json();
    expect(body.meta.backends.duckduckgo).toMatchObject({ status: "error" });
    expect(body.meta.backends.duckduckgo.error).toMatch(/captcha|challenge/i);
    expect(body.meta.backends.wikipedia.status).toBe("error");
    expect(body.meta.backends.brave.status).toBe("error");
    expect(body.meta.backends.searxng.status).toBe("ok");
    // brave asked for 120 s and DDG showed a CAPTCHA: both are left alone on the next request
    const hitsBefore = { ...replay.hits };
    replay.faults.searxng = "garbage";
    const res = await searchReq({ query: "other query" });
    expect(replay.hits.brave).toBe(hitsBefore.brave);
    expect(replay.hits.duckduckgo).toBe(hitsBefore.duckduckgo);
    const second = await res.json();
    if (res.status === 200) {
      expect(second.meta.backends.brave.status).toBe("skipped");
    } else {
      expect(res.status).toBe(502);
      expect(second.error.code).toBe("upstream_error");
      expect(second.error.message).toMatch(/brave/);
      expect(second.error.message).toMatch(/searxng/);
    }
    const health = await (await t.request("/health")).json();
    expect(health.status).toBe("degraded");
    expect(health).not.toHaveProperty("backends");
  });

  it("every engine failing is a 502 naming them, refunded; all hanging is a 504", async () => {
    await app();
    Object.assign(replay.faults, { duckduckgo: "500", wikipedia: "500", brave: "500", searxng: "500" });
    const res = await searchReq({ query: "blue tack" });
    expect(res.status).toBe(502);
    const err = (await res.json()).error;
    expect(err.code).toBe("upstream_error");
    for (const id of ["duckduckgo", "wikipedia", "brave", "searxng"]) expect(err.message).toContain(id);
    // As README promises for a 502: each engine's status in error.backends, not only in the prose.
    for (const id of ["duckduckgo", "wikipedia", "brave", "searxng"]) expect(err.backends[id]).toMatchObject({ status: "error" });
    expect((await (await t.request("/v1/usage", { key })).json()).used).toBe(0);
    // Two more failures in a row and the breakers hold every engine back: the next request cannot ask anyone.
    for (const q of ["second", "third"]) expect((await searchReq({ query: q })).status).toBe(502);
    const suspended = await searchReq({ query: "blue tack again" });
    expect(suspended.status).toBe(502);
    expect((await suspended.json()).error.message).toMatch(/suspended/);
    await t.close();
    await app();
    Object.assign(replay.faults, { duckduckgo: "hang", wikipedia: "hang", brave: "hang", searxng: "hang" });
    const hung = await searchReq({ query: "something else" });
    expect(hung.status).toBe(504);
    const hungErr = (await hung.json()).error;
    expect(hungErr.code).toBe("timeout");
    expect(hungErr.backends.duckduckgo).toMatchObject({ status: "timeout" });
  }, 20_000);

  it("summary tier reads the top pages into query-focused excerpts within 200 tokens; a late page leaves null", async () => {
    await app();
    replay.bodies.searxng = JSON.stringify({
      query: "cloud gaming subscriptions",
      results: [
        { url: `${site.url}/gaming`, title: "So many ways to play and pay", content: "Stadia, xCloud, Apple Arcade", engine: "bing", engines: ["bing"], positions: [1], score: 2, category: "general" },
        { url: `${site.url}/slow`, title: "A slow page about cloud gaming", content: "cloud gaming", engine: "bing", engines: ["bing"], positions: [2], score: 1, category: "general" },
      ],
      number_of_results: 2, answers: [], corrections: [], infoboxes: [], suggestions: [], unresponsive_engines: [],
    });
    const t0 = Date.now();
    const body = await (await searchReq({ query: "cloud gaming subscriptions", tier: "summary", backends: ["searxng"] })).json();
    expect(Date.now() - t0).toBeLessThan(11_000);
    const gaming = body.results.find((r: { url: string }) => r.url.endsWith("/gaming"));
    const slow = body.results.find((r: { url: string }) => r.url.endsWith("/slow"));
    expect(gaming.excerpt).toBeTruthy();
    expect(countTokens(gaming.excerpt)).toBeLessThanOrEqual(200);
    expect(gaming.excerpt.toLowerCase()).toMatch(/gam/);
    expect(slow.excerpt).toBeNull();
    expect(body.meta.tokens_used).toBe(countTokens(gaming.excerpt));
    const full = await (await searchReq({ query: "cloud gaming subscriptions", tier: "full", backends: ["searxng"] })).json();
    const raw = full.results.find((r: { url: string }) => r.url.endsWith("/gaming")).raw_content;
    expect(raw).toContain("Gaming used to be so simple.");
    expect(countTokens(raw)).toBeLessThanOrEqual(4000);
  }, 40_000);

  it("filters by domain", async () => {
    await app();
    const only = await (await searchReq({ query: "exit vim", include_domains: ["stackoverflow.com"], max_results: 20, backends: ["duckduckgo"] })).json();
    expect(only.results.length).toBeGreaterThan(0);
    expect(only.results.every((r: { source: string }) => r.source.endsWith("stackoverflow.com"))).toBe(true);
    const without = await (await searchReq({ query: "exit vim", exclude_domains: ["stackoverflow.com"], max_results: 20, backends: ["duckduckgo"] })).json();
    expect(without.results.some((r: { source: string }) => r.source.endsWith("stackoverflow.com"))).toBe(false);
  });

  it.each([
    [{}, "query"],
    [{ query: "   " }, "query"],
    [{ query: "x".repeat(501) }, "query"],
    [{ query: "q", tier: "premium" }, "tier"],
    [{ query: "q", max_results: 21 }, "max_results"],
    [{ query: "q", max_results: 0 }, "max_results"],
    [{ query: "q", freshness: "hour" }, "freshness"],
    [{ query: "q", backends: ["google"] }, "backends.0"],
    [{ query: "q", include_domains: ["not a host"] }, "include_domains.0"],
    [{ query: "q", language: "english!" }, "language"],
    [{ query: "q", page: 2 }, "page"],
  ])("%o → 400 naming %s", async (json, field) => {
    await app();
    const res = await searchReq(json);
    expect(res.status).toBe(400);
    expect((await res.json()).error.details.map((d: { field: string }) => d.field)).toContain(field);
  });
});
