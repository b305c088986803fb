/**
 * POST /v1/search, the options agent clients ask for (api.md §8) that shape what the engines are
 * asked and what is kept: dates, topic, country, and `meta.ignored` for what an engine cannot do.
 * Engines are the replay server's recordings (Brave's news answer is a labelled synthetic sample).
 */
import * as v from "valibot";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SearchResponseSchema } from "../../core/operations/search/schema.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { replayEnv, startReplayServer, type ReplayServer } from "../helpers/replay-server.ts";
import { localPages, searxngBody } from "../research/fixtures.ts";

interface Result { url: string; published_at: string | null; engines: string[]; favicon?: string | null }
interface Ignored { option: string; reason: string; backends?: string[] }

describe("POST /v1/search options: dates, topic, country, meta.ignored", () => {
  let replay: ReplayServer;
  let t: TestApp;
  let key: string;
  const searchReq = (json: unknown) => t.request("/v1/search", { method: "POST", key, json });
  const ok = async (json: unknown) => {
    const res = await searchReq(json);
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(v.safeParse(SearchResponseSchema, body).success).toBe(true);
    return body;
  };
  const lastUrl = (id: string) => new URL(`http://replay${replay.requests[id]!.at(-1)!}`);

  beforeAll(async () => {
    replay = await startReplayServer();
  });
  afterAll(async () => {
    await replay.close();
  });
  afterEach(async () => {
    for (const k of Object.keys(replay.bodies)) delete replay.bodies[k];
    for (const k of Object.keys(replay.requests)) delete replay.requests[k];
    await t?.close();
  });

  async function app() {
    t = await makeApp({ env: replayEnv(replay.url), pages: localPages(), clock: undefined });
    t.clock.now = () => Date.now();
    key = (await t.key("acme", ["search"])).secret;
  }

  it("start_date/end_date drop and count results outside the range and, by default, undated ones; Brave gets the exact range", async () => {
    await app();
    const all = await ok({ query: "blue tack", topic: "news", max_results: 20 });
    expect(all.results.map((r: Result) => r.url)).toEqual(expect.arrayContaining(["https://archive.example.net/features/2019/blue-tack-history", "https://forum.example.com/threads/blue-tack-tips"]));

    const body = await ok({ query: "blue tack", topic: "news", max_results: 20, start_date: "2024-01-01", end_date: "2024-12-31" });
    const urls = body.results.map((r: Result) => r.url);
    // The gallery story has no page_age, only Brave's display age "June 12, 2024": a known date in range.
    expect(urls).toEqual(expect.arrayContaining(["https://news.example.com/business/2024/05/02/putty-sales", "https://daily.example.org/local/blue-tack-schools", "https://gallery.example.org/2024/summer-show"]));
    expect(urls).not.toContain("https://archive.example.net/features/2019/blue-tack-history");
    expect(urls).not.toContain("https://forum.example.com/threads/blue-tack-tips");
    for (const r of body.results as Result[]) expect(r.published_at! >= "2024-01-01" && r.published_at! < "2025-01-01").toBe(true);
    // Brave's 2019 story and SearXNG's 2023 page are out of range; Brave's forum thread and SearXNG's Wikipedia page have no date.
    expect(body.meta.date_filter).toEqual({ start_date: "2024-01-01", end_date: "2024-12-31", out_of_range: 2, undated: 2, dated_from_pages: 0 });
    expect(body.meta.undated).toBe("dropped");
    expect(body.meta.results_count).toBe(all.meta.results_count - 4);
    expect(lastUrl("brave").searchParams.get("freshness")).toBe("2024-01-01to2024-12-31");
    // SearXNG only takes windows, and no window ends in 2024: it is named as unable to narrow by these dates.
    expect(body.meta.ignored).toContainEqual({ option: "start_date, end_date", reason: expect.stringMatching(/filtered afterwards/), backends: ["searxng"] });

    const kept = await ok({ query: "blue tack", topic: "news", max_results: 20, start_date: "2024-01-01", end_date: "2024-12-31", undated: "keep" });
    expect(kept.meta.undated).toBe("kept");
    expect(kept.results.map((r: Result) => r.url)).toContain("https://forum.example.com/threads/blue-tack-tips");
    expect(kept.results.some((r: Result) => r.published_at === null)).toBe(true);
    expect(kept.results.map((r: Result) => r.url)).not.toContain("https://archive.example.net/features/2019/blue-tack-history");
  });

  it("a recent start_date becomes the narrowest window for engines that only take windows", async () => {
    await app();
    const since = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
    replay.bodies.searxng = searxngBody("blue tack", [{ url: "https://blue.example/recent", title: "Blue tack news", content: "blue tack" }]);
    const body = await ok({ query: "blue tack", start_date: since, backends: ["searxng", "duckduckgo"], undated: "keep" });
    expect(lastUrl("searxng").searchParams.get("time_range")).toBe("week");
    expect(body.meta.ignored.find((i: Ignored) => i.option === "start_date")).toBeUndefined();
  });

  it("topic news asks Brave's news endpoint and SearXNG's news category, and skips engines without news, saying why", async () => {
    await app();
    const body = await ok({ query: "blue tack", topic: "news", max_results: 10 });
    expect(body.meta.topic).toBe("news");
    expect(replay.requests.brave!.at(-1)).toMatch(/^\/res\/v1\/news\/search\?/);
    expect(lastUrl("searxng").searchParams.get("categories")).toBe("news");
    for (const id of ["duckduckgo", "wikipedia"]) expect(body.meta.backends[id]).toMatchObject({ status: "skipped", error: "no news search" });
    expect(replay.requests.duckduckgo).toBeUndefined();
    expect(replay.requests.wikipedia).toBeUndefined();
    expect(body.results.find((r: Result) => r.url.includes("news.example.com")).engines).toEqual(["brave"]);

    const general = await ok({ query: "blue tack", max_results: 10 });
    expect(replay.requests.brave!.at(-1)).toMatch(/^\/res\/v1\/web\/search\?/);
    expect(general.results.some((r: Result) => r.url.includes("news.example.com"))).toBe(false);
    expect(general.meta).not.toHaveProperty("topic");
  });

  it("topic news with no news engine among those asked is searched as general, named in meta.ignored, not refused", async () => {
    await app();
    const body = await ok({ query: "blue tack", topic: "news", backends: ["duckduckgo", "wikipedia"] });
    expect(body.meta.topic).toBe("general");
    expect(body.meta.backends.duckduckgo.status).toBe("ok");
    expect(body.meta.ignored).toContainEqual({ option: "topic", reason: expect.stringMatching(/no news search|searched as general/) });
    expect(body.results.length).toBeGreaterThan(0);
  });

  it("topic finance is accepted, searched as general and named in meta.ignored", async () => {
    await app();
    const body = await ok({ query: "blue tack", topic: "finance" });
    expect(body.meta.topic).toBe("general");
    expect(body.meta.ignored).toContainEqual({ option: "topic", reason: expect.stringMatching(/finance/) });
    expect(replay.requests.brave!.at(-1)).toMatch(/\/web\/search/);
  });

  it("country (name or code) reaches the engines that can search by it; the others are named", async () => {
    await app();
    const body = await ok({ query: "blue tack", country: "germany" });
    expect(body.meta.country).toBe("DE");
    expect(lastUrl("brave").searchParams.get("country")).toBe("de");
    expect(lastUrl("searxng").searchParams.get("language")).toBe("en-DE");
    expect(body.meta.ignored).toEqual([{ option: "country", reason: "cannot search as from DE", backends: ["wikipedia"] }]);

    const kenya = await ok({ query: "blue tack", country: "KE" });
    expect(kenya.meta.country).toBe("KE");
    expect(lastUrl("brave").searchParams.has("country")).toBe(false);
    expect(kenya.meta.ignored[0].backends).toEqual(["duckduckgo", "wikipedia", "brave"]);

    const unknown = await ok({ query: "blue tack", country: "narnia" });
    expect(unknown.meta.country).toBeNull();
    expect(unknown.meta.ignored).toEqual([{ option: "country", reason: expect.stringContaining("narnia") }]);
  });

  it("time_range is freshness under Tavily's name; the engines get it as their own window", async () => {
    await app();
    const body = await ok({ query: "blue tack", time_range: "w" });
    expect(lastUrl("brave").searchParams.get("freshness")).toBe("pw");
    expect(lastUrl("searxng").searchParams.get("time_range")).toBe("week");
    expect(body.meta.ignored).toContainEqual({ option: "time_range", reason: expect.any(String), backends: ["wikipedia"] });
    expect((await searchReq({ query: "q", time_range: "day", freshness: "day" })).status).toBe(200);
  });

  it("include_images takes the engines' own images (Wikipedia's recorded lead images, Brave's news thumbnails)", async () => {
    await app();
    const wiki = await ok({ query: "queens", backends: ["wikipedia"], include_images: true, max_results: 10 });
    expect(wiki.images.length).toBeGreaterThan(0);
    for (const img of wiki.images) {
      expect(img.url).toMatch(/^https:\/\/upload\.wikimedia\.org\//);
      expect(wiki.results.map((r: Result) => r.url)).toContain(img.result_url);
    }
    const news = await ok({ query: "blue tack", topic: "news", backends: ["brave"], include_images: true, include_image_descriptions: true });
    expect(news.images).toContainEqual({ url: "https://imgs.search.brave.com/synthetic-thumbnail/putty-sales.jpg", description: "Adhesive putty maker reports record Blue Tack sales", result_url: "https://news.example.com/business/2024/05/02/putty-sales" });
    const without = await ok({ query: "queens", backends: ["wikipedia"] });
    expect(without).not.toHaveProperty("images");
  });

  it("a request without the new options answers as before: no new keys but an empty meta.ignored", async () => {
    await app();
    const body = await ok({ query: "blue tack" });
    expect(body.meta.ignored).toEqual([]);
    for (const k of ["answer", "images"]) expect(body).not.toHaveProperty(k);
    for (const k of ["undated", "date_filter", "answer", "country"]) expect(body.meta).not.toHaveProperty(k);
    for (const r of body.results) for (const k of ["chunks", "favicon"]) expect(r).not.toHaveProperty(k);
  });

  it.each([
    [{ query: "q", chunks_per_source: 6 }, "chunks_per_source"],
    [{ query: "q", chunks_per_source: 0 }, "chunks_per_source"],
    [{ query: "q", start_date: "2024-02-30" }, "start_date"],
    [{ query: "q", end_date: "24-01-01" }, "end_date"],
    [{ query: "q", start_date: "2024-05-01", end_date: "2024-04-01" }, "end_date"],
    [{ query: "q", include_answer: "yes" }, "include_answer"],
    [{ query: "q", include_raw_content: "html" }, "include_raw_content"],
    [{ query: "q", topic: "sports" }, "topic"],
    [{ query: "q", time_range: "week", freshness: "day" }, "time_range"],
    [{ query: "q", undated: "maybe" }, "undated"],
    [{ query: "q", country: 42 }, "country"],
    [{ query: "q", include_images: "yes" }, "include_images"],
    [{ query: "q", include_favicon: 1 }, "include_favicon"],
  ])("%o → 400 naming %s", async (json, field) => {
    await app();
    const res = await searchReq(json);
    expect(res.status).toBe(400);
    const err = (await res.json()).error;
    expect(err.code).toBe("invalid_request");
    expect(err.details.map((d: { field: string }) => d.field)).toContain(field);
  });
});
