/**
 * The optional video extras, both off unless configured: YouTube Data API v3 enrichment
 * (QUARRY_YOUTUBE_KEY) and the Invidious search fallback (QUARRY_INVIDIOUS_URL). Fixtures are
 * SYNTHETIC, written from the documented schemas (see SOURCES.tsv).
 */
import { afterEach, describe, expect, it } from "vitest";
import * as v from "valibot";
import { createRegistry } from "../../core/backends/registry.ts";
import { createRunner } from "../../core/backends/runner.ts";
import { buildVideosRequest, parseIsoDuration, parseVideosResponse } from "../../core/backends/youtube/data-api.ts";
import { invidious, parseInvidiousSearch } from "../../core/backends/youtube/invidious.ts";
import { youtube } from "../../core/backends/youtube/search.ts";
import { videoSearch, type VideoSearchDeps } from "../../core/operations/video/video.ts";
import { VideoSearchBody, VideoSearchResponse, type VideoSearchRequest } from "../../core/operations/video/schema.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { BASE, FakeClock, outcomeOf, RECORDED_AT, replayFetch, yt, type ReplayRoutes, type VideoSearchOutcome } from "./helpers.ts";

const DATA_API = "http://replay.test/googleapis";
const DATA_API_VIDEOS = `${DATA_API}/youtube/v3/videos`;
const INVIDIOUS = "http://replay.test/invidious";
const VIDEOS_LIST = yt("data_api_videos_list_synthetic.json");
const QUOTA = { status: 403, body: yt("data_api_quota_exceeded_synthetic.json") };
const INV_SEARCH = yt("invidious_search_synthetic.json");
const BLOCKED = { status: 429, body: yt("www_youtube_too_many_requests.html") };

const RECORDED: ReplayRoutes = {
  search: yt("innertube_web_search_test_videos.json"),
  continuation: yt("innertube_web_search_test_videos_continuation.json"),
  players: { default: yt("innertube_android_player_transcripts_disabled.json") },
};

function setup(routes: ReplayRoutes, extra: { key?: string; invidious?: string } = {}) {
  const clock = new FakeClock(RECORDED_AT);
  const { fetch, calls } = replayFetch(routes);
  const registry = createRegistry({ youtube: { url: BASE } }, [youtube]);
  const runner = createRunner({ registry, fetch, clock, timers: clock });
  const deps: VideoSearchDeps = { runner, registry, fetch, clock, timers: clock, deadlineMs: 10_000 };
  if (extra.key) deps.youtubeData = { key: extra.key, baseUrl: DATA_API };
  if (extra.invidious) {
    const fallbackRegistry = createRegistry({ invidious: { url: extra.invidious } }, [invidious]);
    deps.fallback = { registry: fallbackRegistry, runner: createRunner({ registry: fallbackRegistry, fetch, clock, timers: clock }) };
  }
  async function search(body: Record<string, unknown>): Promise<VideoSearchOutcome> {
    const req: VideoSearchRequest = v.parse(VideoSearchBody, body);
    let done: VideoSearchOutcome | undefined;
    const pending = outcomeOf(videoSearch(deps, req)).then((o) => (done = o));
    for (let waited = 0; !done && waited < 30_000; waited += 250) await clock.advance(250);
    return pending;
  }
  return { calls, search };
}

function ok(outcome: VideoSearchOutcome) {
  if (!outcome.ok) throw new Error(`${outcome.error.code}: ${outcome.error.message}`);
  expect(v.safeParse(VideoSearchResponse, outcome.body).success).toBe(true);
  return outcome.body;
}

describe("YouTube Data API parsing", () => {
  it("reads ISO 8601 durations", () => {
    expect(parseIsoDuration("PT1H2M3S")).toBe(3723);
    expect(parseIsoDuration("PT47M20S")).toBe(2840);
    expect(parseIsoDuration("P1DT2S")).toBe(86402);
    expect(parseIsoDuration("P0D")).toBe(0);
    for (const bad of ["", "P", "PT", "1:00", "PT1.5S", "P1W"]) expect(parseIsoDuration(bad)).toBeNull();
  });

  it("parses the documented videos.list answer; string view counts become numbers", () => {
    const parsed = parseVideosResponse(200, VIDEOS_LIST);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.videos.get("Z8KYabgkMbw")).toEqual({ id: "Z8KYabgkMbw", published_at: "2025-04-12T09:30:15Z", view_count: 391002, duration_seconds: 2840 });
    expect(parsed.videos.size).toBe(2);
  });

  it("classifies quota errors and odd bodies without throwing", () => {
    expect(parseVideosResponse(403, QUOTA.body)).toEqual({ ok: false, error: "YouTube Data API HTTP 403: quotaExceeded" });
    expect(parseVideosResponse(200, "<html>").ok).toBe(false);
    expect(parseVideosResponse(200, "{}").ok).toBe(false);
    const odd = parseVideosResponse(200, JSON.stringify({ items: [{ id: "x", snippet: { publishedAt: 5 }, statistics: { viewCount: "-1" } }, 7, null] }));
    expect(odd).toEqual({ ok: true, videos: new Map([["x", { id: "x", published_at: null, view_count: null, duration_seconds: null }]]) });
  });

  it("builds one GET with the parts, ids and key under the base URL", () => {
    const req = buildVideosRequest("https://www.googleapis.com", ["a", "b"], "K");
    expect(req.method).toBe("GET");
    const url = new URL(req.url);
    expect(url.origin + url.pathname).toBe("https://www.googleapis.com/youtube/v3/videos");
    expect(Object.fromEntries(url.searchParams)).toEqual({ part: "snippet,statistics,contentDetails", id: "a,b", key: "K" });
  });
});

describe("Invidious parsing", () => {
  it("maps documented search items to videos, leaving out channels and live streams", () => {
    const parsed = parseInvidiousSearch(INV_SEARCH, { maxResults: 20, page: 1 });
    if (!parsed.ok) throw new Error("parse failed");
    const page = parsed.results[0]!;
    expect(page.skipped).toBe(2);
    expect(page.continuation).toBe("2");
    expect(page.videos.map((x) => x.video_id)).toEqual(["aaaaaaaaaa1", "bbbbbbbbbb2"]);
    expect(page.videos[0]).toMatchObject({
      title: "Synthetic Invidious result one",
      channel: "Synthetic Author",
      channel_id: "UCsynthetic00000000000aa",
      url: "https://www.youtube.com/watch?v=aaaaaaaaaa1",
      thumbnail: "https://i.ytimg.com/vi/aaaaaaaaaa1/maxresdefault.jpg",
      duration_seconds: 754,
      view_count: 12345,
      published_at: "2025-01-01T00:00:00Z",
      published_approximate: true,
      rank: 1,
    });
    expect(parseInvidiousSearch("[]", { maxResults: 20 })).toMatchObject({ ok: true, results: [{ videos: [], continuation: null }] });
    expect(parseInvidiousSearch('{"error":"Could not fetch"}', { maxResults: 20 }).ok).toBe(false);
    expect(parseInvidiousSearch("<html>", { maxResults: 20 }).ok).toBe(false);
  });
});

describe("videoSearch with Data API enrichment", () => {
  it("replaces approximate dates and views with exact ones and clears approximate_dates", async () => {
    const { search, calls } = setup({ ...RECORDED, others: { [DATA_API_VIDEOS]: VIDEOS_LIST } }, { key: "test-key" });
    const body = ok(await search({ query: "mind map", max_results: 2, include_transcript: false }));
    expect(body.meta.approximate_dates).toBeUndefined();
    expect(body.meta.backends).toMatchObject({ youtube: { status: "ok" }, youtube_data_api: { status: "ok", results: 2 } });
    const byId = Object.fromEntries(body.results.map((r) => [r.video_id, r]));
    expect(byId.Z8KYabgkMbw).toMatchObject({ published_at: "2025-04-12T09:30:15Z", view_count: 391002, duration_seconds: 2840 });
    expect(byId["0YWt4Ai8q_g"]).toMatchObject({ published_at: "2025-10-03T21:04:00Z", view_count: 594871, duration_seconds: 1392 });
    const dataCalls = calls.filter((c) => c.url.startsWith(DATA_API_VIDEOS));
    expect(dataCalls).toHaveLength(1);
    expect(new URL(dataCalls[0]!.url).searchParams.get("id")).toBe("Z8KYabgkMbw,0YWt4Ai8q_g");
  });

  it("a 403 quota answer leaves results as they were and the request succeeds", async () => {
    const plain = ok(await setup(RECORDED).search({ query: "mind map", max_results: 2, include_transcript: false }));
    const { search } = setup({ ...RECORDED, others: { [DATA_API_VIDEOS]: QUOTA } }, { key: "test-key" });
    const body = ok(await search({ query: "mind map", max_results: 2, include_transcript: false }));
    expect(body.results).toEqual(plain.results);
    expect(body.meta.approximate_dates).toBe(true);
    expect(body.meta.backends!.youtube_data_api).toMatchObject({ status: "error", error: "YouTube Data API HTTP 403: quotaExceeded" });
    expect(JSON.stringify(body)).not.toContain("test-key");
  });

  it("a network failure leaves results as they were", async () => {
    // No route for the Data API: replayFetch rejects the unknown URL like a network error.
    const { search } = setup(RECORDED, { key: "test-key" });
    const body = ok(await search({ query: "mind map", max_results: 2, include_transcript: false }));
    expect(body.results).toHaveLength(2);
    expect(body.meta.approximate_dates).toBe(true);
    expect(body.meta.backends!.youtube_data_api).toMatchObject({ status: "error" });
    expect(JSON.stringify(body)).not.toContain("test-key");
  });

  it("no key, no call", async () => {
    const { search, calls } = setup({ ...RECORDED, others: { [DATA_API_VIDEOS]: VIDEOS_LIST } });
    const body = ok(await search({ query: "mind map", max_results: 2, include_transcript: false }));
    expect(calls.some((c) => c.url.startsWith(DATA_API))).toBe(false);
    expect(Object.keys(body.meta.backends!)).toEqual(["youtube"]);
  });
});

describe("videoSearch with the Invidious fallback", () => {
  it("InnerTube blocked + Invidious configured: results from Invidious, both reported", async () => {
    const { search, calls } = setup({ ...RECORDED, search: BLOCKED, others: { [`${INVIDIOUS}/api/v1/search`]: INV_SEARCH } }, { invidious: INVIDIOUS });
    const body = ok(await search({ query: "mind map", max_results: 5, include_transcript: false }));
    expect(body.results.map((r) => r.video_id).sort()).toEqual(["aaaaaaaaaa1", "bbbbbbbbbb2"]);
    expect(body.meta.backends).toMatchObject({ youtube: { status: "error" }, invidious: { status: "ok", results: 2 } });
    expect(body.meta.approximate_dates).toBe(true);
    const first = new URL(calls.find((c) => c.url.startsWith(INVIDIOUS))!.url);
    expect(Object.fromEntries(first.searchParams)).toMatchObject({ q: "mind map", type: "video", page: "1" });
  });

  it("InnerTube fine: Invidious is never called", async () => {
    const { search, calls } = setup({ ...RECORDED, others: { [`${INVIDIOUS}/api/v1/search`]: INV_SEARCH } }, { invidious: INVIDIOUS });
    const body = ok(await search({ query: "mind map", max_results: 2, include_transcript: false }));
    expect(calls.some((c) => c.url.startsWith(INVIDIOUS))).toBe(false);
    expect(Object.keys(body.meta.backends!)).toEqual(["youtube"]);
  });

  it("both failing: upstream_error naming both", async () => {
    const { search } = setup({ ...RECORDED, search: BLOCKED, others: { [`${INVIDIOUS}/api/v1/search`]: { status: 500, body: "oops" } } }, { invidious: INVIDIOUS });
    const outcome = await search({ query: "mind map", include_transcript: false });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error.code).toBe("upstream_error");
    expect(Object.keys(outcome.error.backends).sort()).toEqual(["invidious", "youtube"]);
  });
});

describe("POST /v1/video/search with the extras configured", () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function mount(routes: ReplayRoutes, env: Record<string, string>) {
    const { fetch, calls } = replayFetch(routes);
    app = await makeApp({ env: { QUARRY_YOUTUBE_URL: BASE, ...env }, fetch });
    const { secret } = await app.key("acme", ["search"]);
    return { app, secret, calls };
  }

  it("QUARRY_YOUTUBE_KEY: exact dates from the Data API (default googleapis base)", async () => {
    const { app, secret, calls } = await mount({ ...RECORDED, others: { "https://www.googleapis.com/youtube/v3/videos": VIDEOS_LIST } }, { QUARRY_YOUTUBE_KEY: "route-key" });
    const res = await app.request("/v1/video/search", { method: "POST", key: secret, json: { query: "mind map", max_results: 2, include_transcript: false } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.meta.approximate_dates).toBeUndefined();
    expect(body.results.find((r: { video_id: string }) => r.video_id === "Z8KYabgkMbw").published_at).toBe("2025-04-12T09:30:15Z");
    expect(new URL(calls.find((c) => c.url.startsWith("https://www.googleapis.com"))!.url).searchParams.get("key")).toBe("route-key");
  });

  it("QUARRY_YOUTUBE_KEY with a 403: still 200, results unchanged", async () => {
    const { app, secret } = await mount({ ...RECORDED, others: { "https://www.googleapis.com/youtube/v3/videos": QUOTA } }, { QUARRY_YOUTUBE_KEY: "route-key" });
    const res = await app.request("/v1/video/search", { method: "POST", key: secret, json: { query: "mind map", max_results: 2, include_transcript: false } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.meta.approximate_dates).toBe(true);
    expect(body.results).toHaveLength(2);
  });

  it("InnerTube blocked + QUARRY_INVIDIOUS_URL: 200 from Invidious", async () => {
    const { app, secret } = await mount({ ...RECORDED, search: BLOCKED, others: { [`${INVIDIOUS}/api/v1/search`]: INV_SEARCH } }, { QUARRY_INVIDIOUS_URL: INVIDIOUS });
    const res = await app.request("/v1/video/search", { method: "POST", key: secret, json: { query: "mind map", include_transcript: false } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.results.map((r: { video_id: string }) => r.video_id).sort()).toEqual(["aaaaaaaaaa1", "bbbbbbbbbb2"]);
    expect(body.meta.backends.invidious.status).toBe("ok");
  });

  it("InnerTube blocked + no Invidious: still 502", async () => {
    const { app, secret, calls } = await mount({ ...RECORDED, search: BLOCKED, others: { [`${INVIDIOUS}/api/v1/search`]: INV_SEARCH } }, {});
    const res = await app.request("/v1/video/search", { method: "POST", key: secret, json: { query: "mind map" } });
    expect(res.status).toBe(502);
    expect((await res.json()).error.code).toBe("upstream_error");
    expect(calls.some((c) => c.url.startsWith(INVIDIOUS))).toBe(false);
  });
});
