/**
 * A cached POST /v1/scrape is sent from the cache's JSON text (issue #33): the in-process cache
 * hands out the entry's text and the route writes the hit's `duration_ms` and `cache_age_ms` into
 * it, without parsing the entry or serialising the answer. The bytes must be the ones
 * JSON.stringify gives the answer the parsed path makes (the path of the compatibility routes and
 * of caches without text), with the same fields, order and metadata.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { createPrometheusMetrics } from "../../adapters/metrics/prometheus.ts";
import { validOrThrow } from "../../core/gateway/validate.ts";
import { ScrapeBody } from "../../core/operations/scrape/schema.ts";
import { cacheKey, scrape, type ScrapeResult } from "../../core/operations/scrape/scrape.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";

// A title and text that hold the very keys the hit writes, quotes, escapes and characters JSON escapes or not.
const TRICKY = `<!doctype html><html lang="fr"><head><title>"duration_ms":0,"cache_age_ms":0 \\ naïve 日本 🦊 \u2028</title></head><body><article><h1>Le "cached":false</h1>${
  "<p>Un paragraphe assez long pour être lu comme le contenu de la page, avec \"des guillemets\", des barres \\ obliques et des accents é à ü.</p>".repeat(5)
}</article></body></html>`;

describe("a cached scrape sent from the cache's JSON text", () => {
  let site: PageServer;
  let t: TestApp;
  let key: string;
  const post = (json: Record<string, unknown>) => t.request("/v1/scrape", { method: "POST", key, json });

  beforeAll(async () => {
    site = await startPageServer();
    site.route("/tricky", send("text/html; charset=utf-8", TRICKY));
    site.route("/plain", send("text/plain; charset=utf-8", "plain words for the cache"));
    t = await makeApp({ pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }), metrics: createPrometheusMetrics(), env: { QUARRY_METRICS: "true" } });
    key = (await t.key("acme", ["scrape"])).secret;
  });
  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  /** What the parsed path answers for the same request now, with this hit's duration (the one number the two paths measure apart). */
  async function parsedPath(body: Record<string, unknown>, duration: number): Promise<string> {
    const viaObject: ScrapeResult = await scrape(t.ports, validOrThrow(ScrapeBody, body));
    expect(viaObject.meta.cached).toBe(true);
    return JSON.stringify({ ...viaObject, meta: { ...viaObject.meta, duration_ms: duration } });
  }

  it("answers a hit with the bytes of the parsed path's answer: same fields, order, metadata, its own age", async () => {
    for (const body of [
      { url: `${site.url}/tricky`, formats: ["markdown", "text", "html", "links"] },
      { url: `${site.url}/tricky`, formats: ["text"], max_tokens: 40 },
      { url: `${site.url}/plain` },
    ]) {
      const miss = await post(body);
      expect(miss.status).toBe(200);
      const fresh = await miss.text();
      expect(JSON.parse(fresh).meta.cached).toBe(false);
      await t.clock.advance(1_234);
      const res = await post(body);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("application/json");
      const text = await res.text();
      const got = JSON.parse(text);
      expect(got.meta).toMatchObject({ cached: true, cache_age_ms: 1_234 });
      expect(text).toBe(JSON.stringify(got));
      expect(text).toBe(await parsedPath(body, got.meta.duration_ms));
      // The fresh answer and the hit differ only in the three numbers a hit sets.
      const before = JSON.parse(fresh);
      expect(Object.keys(got.meta)).toEqual(Object.keys(before.meta));
      expect({ ...got, meta: { ...got.meta, cached: false, cache_age_ms: null, duration_ms: 0 } }).toEqual({ ...before, meta: { ...before.meta, duration_ms: 0 } });
    }
  });

  it("reads the entry as text, never parsed through get, and counts each lookup once as a scrape2 hit", async () => {
    const lookups = async (result: string) => {
      const metrics = await (await t.request("/metrics")).text();
      return Number(new RegExp(`quarry_cache_lookups_total\\{kind="scrape2",result="${result}"[^}]*\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
    };
    const body = { url: `${site.url}/plain`, formats: ["text"] };
    expect((await post(body)).status).toBe(200);
    const [hits, misses] = [await lookups("hit"), await lookups("miss")];
    const get = vi.spyOn(t.ports.cache, "get");
    try {
      for (let i = 0; i < 3; i++) expect((await post(body)).status).toBe(200);
      expect(get).not.toHaveBeenCalled();
    } finally {
      get.mockRestore();
    }
    expect(await lookups("hit")).toBe(hits + 3);
    expect(await lookups("miss")).toBe(misses);
  });

  it("an entry whose numbers have no place in its text is answered from its parsed answer, with the same bytes", async () => {
    const body = { url: `${site.url}/tricky`, formats: ["markdown"] };
    expect((await post(body)).status).toBe(200);
    const k = cacheKey(validOrThrow(ScrapeBody, body));
    const entry = await t.ports.cache.get<[number, number, number, ScrapeResult]>(k);
    expect(entry && entry[1] > 0 && entry[2] > 0).toBe(true);
    await t.ports.cache.set(k, [entry![0], -1, -1, entry![3]], 60);
    const text = await (await post(body)).text();
    const got = JSON.parse(text);
    expect(got.meta.cached).toBe(true);
    expect(text).toBe(await parsedPath(body, got.meta.duration_ms));
  });

  it("an entry older than max_age_ms is not served; max_age_ms 0 reads afresh", async () => {
    const body = { url: `${site.url}/plain?age`, formats: ["markdown"] };
    expect((await post(body)).status).toBe(200);
    const reads = () => site.hits.filter((h) => h === "/plain?age").length;
    await t.clock.advance(5_000);
    expect((await (await post({ ...body, max_age_ms: 10_000 })).json()).meta).toMatchObject({ cached: true, cache_age_ms: 5_000 });
    const n = reads();
    expect((await (await post({ ...body, max_age_ms: 1_000 })).json()).meta).toMatchObject({ cached: false, cache_age_ms: null });
    expect(reads()).toBe(n + 1);
    expect((await (await post({ ...body, max_age_ms: 0 })).json()).meta.cached).toBe(false);
    expect(reads()).toBe(n + 2);
  });
});
