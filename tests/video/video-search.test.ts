/**
 * videoSearch end to end over recorded traffic: a replay fetch serves the recorded search
 * pages, players and captions by URL under a configured base URL (QUARRY_YOUTUBE_URL).
 * The recordings are of other videos than the search results, so the replay maps each
 * result id to a recorded player; caption requests follow the URLs found in those players.
 */
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { createRegistry } from "../../core/backends/registry.ts";
import { createRunner } from "../../core/backends/runner.ts";
import { youtube } from "../../core/backends/youtube/search.ts";
import { videoSearch } from "../../core/operations/video/video.ts";
import { VideoSearchBody, VideoSearchResponse, type VideoSearchRequest } from "../../core/operations/video/schema.ts";
import { FRESHNESS_MS } from "../../core/ranking/merge.ts";
import * as v from "valibot";
import { BASE, FakeClock, outcomeOf, RECORDED_AT, replayFetch, yt, type ReplayRoutes, type VideoSearchOutcome } from "./helpers.ts";

const JSON3 = yt("timedtext_json3_asr_en.json");
const o200k = (text: string) => encode(text, { disallowedSpecial: new Set() }).length;

const RECORDED: ReplayRoutes = {
  search: yt("innertube_web_search_test_videos.json"),
  continuation: yt("innertube_web_search_test_videos_continuation.json"),
  players: {
    Z8KYabgkMbw: yt("innertube_android_player_GJLlxj_dtq8_ok.json"), // captions v=GJLlxj_dtq8 → json3
    "0YWt4Ai8q_g": yt("innertube_android_player_request_blocked.json"), // bot block
    UEQSkaqrMZA: yt("innertube_android_reel_item_watch_M4gD1WSo5mA_captions.json"), // captions v=M4gD1WSo5mA → empty body
    WN3cB7w_7MA: yt("innertube_web_player_2isYuQZMbdU_captions.json"), // WEB: exact date, captions v=2isYuQZMbdU → json3
    wRyD81oBUSM: yt("innertube_android_player_po_token_required.json"), // chosen track needs a PO token
    default: yt("innertube_android_player_transcripts_disabled.json"),
  },
  captions: { GJLlxj_dtq8: JSON3, "2isYuQZMbdU": JSON3, M4gD1WSo5mA: "" },
};

const SPEC_RESULT_KEYS = ["video_id", "title", "channel", "channel_id", "url", "thumbnail", "duration_seconds", "view_count", "published_at", "score", "transcript_snippet"];

function setup(routes: ReplayRoutes = RECORDED, settings: { url?: string } = { url: BASE }) {
  const clock = new FakeClock(RECORDED_AT);
  const { fetch, calls } = replayFetch(routes);
  const registry = createRegistry({ youtube: settings }, [youtube]);
  const runner = createRunner({ registry, fetch, clock, timers: clock });
  const deps = { runner, registry, fetch, clock, timers: clock, deadlineMs: 10_000 };
  async function search(body: Record<string, unknown>): Promise<VideoSearchOutcome> {
    const req: VideoSearchRequest = v.parse(VideoSearchBody, body);
    let done: VideoSearchOutcome | undefined;
    const pending = outcomeOf(videoSearch(deps, req)).then((o) => (done = o));
    for (let waited = 0; !done && waited < 30_000; waited += 250) await clock.advance(250);
    return pending;
  }
  return { clock, calls, search };
}

function ok(outcome: VideoSearchOutcome) {
  if (!outcome.ok) throw new Error(`${outcome.error.code}: ${outcome.error.message}`);
  expect(v.safeParse(VideoSearchResponse, outcome.body).success).toBe(true);
  return outcome.body;
}

describe("videoSearch over recorded traffic", () => {
  it("answers with the spec's fields, snippets where transcripts exist and null where they fail", async () => {
    const { search, calls } = setup();
    const body = ok(await search({ query: "blind test English conversation mind map" }));
    expect(body.meta).toMatchObject({ query: "blind test English conversation mind map", results_count: 5, approximate_dates: true });
    expect(body.meta.backends).toEqual({ youtube: { status: "ok", results: 20, latency_ms: expect.any(Number) } });
    expect(body.results).toHaveLength(5);
    for (const r of body.results) expect(Object.keys(r).sort()).toEqual([...SPEC_RESULT_KEYS].sort());

    const byId = Object.fromEntries(body.results.map((r) => [r.video_id, r]));
    expect(Object.keys(byId).sort()).toEqual(["0YWt4Ai8q_g", "UEQSkaqrMZA", "WN3cB7w_7MA", "Z8KYabgkMbw", "wRyD81oBUSM"]);
    expect(byId.Z8KYabgkMbw!.transcript_snippet).toMatch(/^\[\d{2}:\d{2}\] .*mind map/);
    expect(byId.WN3cB7w_7MA!.transcript_snippet).not.toBeNull();
    expect(byId["0YWt4Ai8q_g"]!.transcript_snippet).toBeNull(); // player blocked (bot)
    expect(byId.UEQSkaqrMZA!.transcript_snippet).toBeNull(); // caption URL answered an empty body
    expect(byId.wRyD81oBUSM!.transcript_snippet).toBeNull(); // PO token needed: not even fetched

    // Exact date from the WEB player's microformat replaces the approximate one.
    expect(byId.WN3cB7w_7MA!.published_at).toBe("2022-08-04T19:59:59Z");
    expect(byId.Z8KYabgkMbw).toMatchObject({ published_at: "2025-04-26T18:00:00Z", duration_seconds: 2840, view_count: 390201, channel: "Blind Test & Chill", url: "https://www.youtube.com/watch?v=Z8KYabgkMbw" });

    // Every snippet within the summary budget; tokens_used is their o200k sum.
    const snippets = body.results.map((r) => r.transcript_snippet).filter((s): s is string => s !== null);
    for (const s of snippets) expect(o200k(s)).toBeLessThanOrEqual(200);
    expect(body.meta.tokens_used).toBe(snippets.reduce((sum, s) => sum + o200k(s), 0));

    // Scores in [0, 1], sorted.
    const scores = body.results.map((r) => r.score);
    for (const s of scores) expect(s >= 0 && s <= 1).toBe(true);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);

    // Every call went to the configured base URL (captions rebased from www.youtube.com), none for the PO-token track.
    expect(calls.every((c) => c.url.startsWith(`${BASE}/`))).toBe(true);
    const captionCalls = calls.filter((c) => c.url.includes("/api/timedtext"));
    expect(captionCalls.map((c) => new URL(c.url).searchParams.get("v")).sort()).toEqual(["2isYuQZMbdU", "GJLlxj_dtq8", "M4gD1WSo5mA"]);
    expect(captionCalls.every((c) => new URL(c.url).searchParams.get("fmt") === "json3")).toBe(true);
    expect(captionCalls.some((c) => c.url.includes("exp=xpe"))).toBe(false);
    expect(calls.filter((c) => c.url.includes("/youtubei/v1/search"))).toHaveLength(1); // 5 results: no continuation needed
  });

  it("tier detailed and full stay within 800 and 4000 tokens", async () => {
    for (const [tier, budget] of [["detailed", 800], ["full", 4000]] as const) {
      const body = ok(await setup().search({ query: "speak fluently", tier, max_results: 2 }));
      const snippets = body.results.map((r) => r.transcript_snippet).filter((s): s is string => s !== null);
      expect(snippets.length).toBeGreaterThan(0);
      for (const s of snippets) expect(o200k(s)).toBeLessThanOrEqual(budget);
      expect(body.meta.tokens_used).toBe(snippets.reduce((sum, s) => sum + o200k(s), 0));
    }
  });

  it("basic tier and include_transcript=false fetch no player at all", async () => {
    for (const body of [{ query: "test", tier: "basic" }, { query: "test", include_transcript: false }]) {
      const { search, calls } = setup();
      const out = ok(await search(body));
      expect(out.results.every((r) => r.transcript_snippet === null)).toBe(true);
      expect(out.meta.tokens_used).toBe(0);
      expect(calls.some((c) => c.url.includes("/player"))).toBe(false);
      const scores = out.results.map((r) => r.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    }
  });

  it("duration filters are exact and follow continuation pages to fill max_results", async () => {
    const { search, calls } = setup();
    const body = ok(await search({ query: "test", include_transcript: false, max_results: 6, min_duration: 1800, max_duration: 3600 }));
    // Page 1 holds 4 videos of 30–60 minutes, the continuation page 3 more.
    expect(body.results.map((r) => r.video_id).sort()).toEqual(["6FsYk9GIv2Y", "9-JeWpq0aYg", "Xybph6W15mE", "Z8KYabgkMbw", "wRyD81oBUSM", "zmKaAmselhM"]);
    for (const r of body.results) expect(r.duration_seconds >= 1800 && r.duration_seconds <= 3600).toBe(true);
    const searches = calls.filter((c) => c.url.includes("/youtubei/v1/search"));
    expect(searches).toHaveLength(2);
    expect(searches[1]!.body).toMatchObject({ continuation: expect.stringMatching(/^Ep0DEgR0ZXN0/) });
    expect(body.meta.backends!.youtube!.results).toBe(40);
  });

  it("stops following pages at the page limit when too few videos pass", async () => {
    const { search, calls } = setup();
    const body = ok(await search({ query: "test", include_transcript: false, max_results: 20, min_duration: 1800, max_duration: 3600 }));
    expect(body.results).toHaveLength(7); // every 30–60 minute video of both recorded pages
    // The replay answers every continuation with the same recorded page: its videos are not counted twice.
    expect(calls.filter((c) => c.url.includes("/youtubei/v1/search"))).toHaveLength(4);
    expect(body.meta.backends!.youtube!.results).toBe(40);
  });

  it("freshness is exact on the returned dates", async () => {
    const { search, calls } = setup();
    const body = ok(await search({ query: "test", include_transcript: false, max_results: 20, freshness: "week" }));
    expect(body.results.length).toBeGreaterThan(3);
    for (const r of body.results) expect(Date.parse(r.published_at!)).toBeGreaterThanOrEqual(RECORDED_AT - FRESHNESS_MS.week);
    expect(body.meta.approximate_dates).toBe(true);
    // The upload-date filter is asked of YouTube too.
    expect(decodeURIComponent(String(calls[0]!.body!.params))).toBe(btoa(String.fromCharCode(0x12, 4, 0x08, 3, 0x10, 1, 0xf0, 1, 1)));
  });

  it("a filter nothing passes gives an empty answer, not an error", async () => {
    const body = ok(await setup().search({ query: "test", max_results: 5, min_duration: 100_000 }));
    expect(body.results).toEqual([]);
    expect(body.meta).toMatchObject({ results_count: 0, tokens_used: 0 });
  });

  it("a failing continuation page keeps the first page's results", async () => {
    const { search } = setup({ ...RECORDED, continuation: { status: 500, body: "" } });
    const body = ok(await search({ query: "test", include_transcript: false, max_results: 20, min_duration: 1800 }));
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.meta.backends!.youtube).toMatchObject({ status: "ok", error: expect.stringContaining("page 2") });
  });

  it("caption fetches still pending at the deadline give null snippets, and the answer comes at the deadline", async () => {
    const { search, clock } = setup({ ...RECORDED, captions: { default: "hang" } });
    const started = clock.now();
    const body = ok(await search({ query: "mind map" }));
    expect(body.results).toHaveLength(5);
    expect(body.results.every((r) => r.transcript_snippet === null)).toBe(true);
    expect(clock.now() - started).toBeLessThanOrEqual(10_000);
  });
});

describe("videoSearch failures", () => {
  const failing = async (routes: ReplayRoutes, settings?: { url?: string }) => {
    const out = await setup({ ...RECORDED, ...routes }, settings).search({ query: "test" });
    if (out.ok) throw new Error("expected a failure");
    return out.error;
  };

  it("the CAPTCHA page (429) is an upstream_error naming the backend", async () => {
    const error = await failing({ search: { status: 429, body: yt("www_youtube_too_many_requests.html") } });
    expect(error).toMatchObject({ code: "upstream_error", message: expect.stringContaining("youtube") });
    expect(error.backends.youtube).toMatchObject({ status: "error", error: expect.stringContaining("rate_limited") });
  });

  it("the consent page is an upstream_error (blocked)", async () => {
    const error = await failing({ search: yt("www_youtube_consent_page.html") });
    expect(error).toMatchObject({ code: "upstream_error" });
    expect(error.backends.youtube!.error).toMatch(/^blocked/);
  });

  it("a search that never answers is a timeout", async () => {
    const error = await failing({ search: "hang" });
    expect(error).toMatchObject({ code: "timeout" });
  });

  it("a disabled backend is an upstream_error with its reason", async () => {
    const error = await failing({}, { url: "ftp://mirror.example" });
    expect(error).toMatchObject({ code: "upstream_error", message: expect.stringContaining("QUARRY_YOUTUBE_URL") });
  });
});
