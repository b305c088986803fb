import { describe, expect, it } from "vitest";
import { youtube, parseSearchPage, type YoutubeQuery, type YoutubeSearchPage } from "../../core/backends/youtube/search.ts";
import { buildSearchRequest, durationBucket, searchParams } from "../../core/backends/youtube/innertube.ts";
import { parseDuration, parseViewCount, relativeDateToIso } from "../../core/backends/youtube/values.ts";
import type { ParseOutcome } from "../../core/backends/types.ts";
import { answer, RECORDED_AT, yt } from "./helpers.ts";

const q = (over: Partial<YoutubeQuery> = {}): YoutubeQuery => ({ query: "test", maxResults: 100, language: "en", freshness: null, now: RECORDED_AT, ...over });

function page(outcome: ParseOutcome<YoutubeSearchPage>): YoutubeSearchPage {
  if (!outcome.ok) throw new Error(`expected a page, got ${outcome.error.class}: ${outcome.error.message}`);
  expect(outcome.results).toHaveLength(1);
  return outcome.results[0]!;
}

describe("youtube search request", () => {
  it("POSTs the WEB client context and the video filter to /youtubei/v1/search under the base URL", async () => {
    const req = youtube.buildRequest(q({ query: "blue tack", language: "en-GB" }), { baseUrl: "http://replay.test/prefix" });
    expect(req.method).toBe("POST");
    expect(req.url).toBe("http://replay.test/prefix/youtubei/v1/search?prettyPrint=false");
    expect(req.headers.get("content-type")).toBe("application/json");
    const body = await req.json();
    expect(body).toEqual({
      context: { client: { clientName: "WEB", clientVersion: "2.20260123.01.00", hl: "en", gl: "GB" } },
      query: "blue tack",
      params: "EgIQAfABAQ%3D%3D", // exactly the recorded video filter
    });
  });

  it("sends only the token for a continuation page", async () => {
    const req = youtube.buildRequest(q({ continuation: "TOKEN" }), { baseUrl: "https://www.youtube.com" });
    const body = await req.json();
    expect(body.continuation).toBe("TOKEN");
    expect(body.query).toBeUndefined();
  });

  it("encodes upload-date and safe duration filters into params", () => {
    const decode = (p: string) => [...atob(decodeURIComponent(p))].map((c) => c.charCodeAt(0));
    expect(decode(searchParams({ freshness: "week" }))).toEqual([0x12, 4, 0x08, 3, 0x10, 1, 0xf0, 1, 1]);
    expect(decode(searchParams({ freshness: "day", duration: "long" }))).toEqual([0x12, 6, 0x08, 2, 0x10, 1, 0x18, 2, 0xf0, 1, 1]);
    expect(durationBucket(1201, null)).toBe("long");
    expect(durationBucket(1200, null)).toBeNull(); // on the boundary YouTube's rounding could drop a match
    expect(durationBucket(null, 239)).toBe("short");
    expect(durationBucket(300, 900)).toBe("medium");
    expect(durationBucket(0, 900)).toBeNull();
  });

  it("builds the same body through the shared builder", async () => {
    const req = buildSearchRequest("https://www.youtube.com", { query: "x", language: "de", filters: { freshness: "year" } });
    expect((await req.json()).context.client.gl).toBe("US");
  });
});

describe("youtube search parser on the recorded 2026 pages", () => {
  it("reads the first page: 20 videos, shelves left out, a continuation token", () => {
    const p = page(youtube.parseResponse(answer(yt("innertube_web_search_test_videos.json")), q()));
    expect(p.videos).toHaveLength(20);
    expect(p.skipped).toBe(2); // "Popular in Lyon" and "Channels new to you" shelves
    expect(p.estimated_results).toBe(430195562);
    expect(p.continuation).toMatch(/^Ep0DEgR0ZXN0/);
    expect(p.videos.map((v) => v.rank)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(p.videos[0]).toEqual({
      video_id: "Z8KYabgkMbw",
      title: "Blind Test TOUT GENRE | 140 extraits",
      channel: "Blind Test & Chill",
      channel_id: "UCuEBTg6pcG7s3PpPGRtFKQA",
      url: "https://www.youtube.com/watch?v=Z8KYabgkMbw",
      thumbnail: expect.stringMatching(/^https:\/\/i\.ytimg\.com\/vi\/Z8KYabgkMbw\/hq720\.jpg\?sqp=-oaymwEcCNAFEJQDSFXyq4qpAw4IARUAAIhCGAFwAcABBg==/),
      duration_seconds: 2840,
      view_count: 390201,
      published_at: "2025-04-26T18:00:00Z",
      published_approximate: true,
      published_text: "9 months ago",
      description_snippet: "Bienvenue sur ce Blind Test Tout Genre! 140 extrait pour vous amuser et vous défiez ! N'oubliez pas de mettre votre note en ...",
      rank: 1,
    });
    const long = p.videos.find((v) => v.video_id === "UEQSkaqrMZA")!;
    expect(long.duration_seconds).toBe(1 * 3600 + 17 * 60 + 43);
    const streamed = p.videos.find((v) => v.published_text === "Streamed 14 minutes ago")!;
    expect(streamed.published_at).toBe("2026-01-26T17:46:00Z"); // a past stream is a plain video
    for (const v of p.videos) {
      expect(v.video_id).toMatch(/^[\w-]{11}$/);
      expect(v.channel).not.toBe("");
      expect(v.channel_id).toMatch(/^UC[\w-]{22}$/);
      expect(v.duration_seconds).toBeGreaterThan(0);
      expect(v.view_count).toBeGreaterThan(0);
    }
  });

  it("reads the continuation page (onResponseReceivedCommands → appendContinuationItemsAction)", () => {
    const p = page(youtube.parseResponse(answer(yt("innertube_web_search_test_videos_continuation.json")), q()));
    expect(p.videos).toHaveLength(20);
    expect(p.videos[0]).toMatchObject({ video_id: "JOHUZMTdgBY", channel: "Gaming With Riya", duration_seconds: 19222, view_count: 12870 });
    expect(p.continuation).not.toBeNull();
    expect(p.estimated_results).toBe(430196212);
  });

  it("leaves dates null without a clock, and respects maxResults", () => {
    const p = page(parseSearchPage(yt("innertube_web_search_test_videos.json"), { maxResults: 3 }));
    expect(p.videos).toHaveLength(3);
    expect(p.videos.every((v) => v.published_at === null && !v.published_approximate)).toBe(true);
  });

  it("leaves out Shorts, live and upcoming items (synthetic page)", () => {
    const p = page(youtube.parseResponse(answer(yt("innertube_web_search_mixed_synthetic.json")), q()));
    expect(p.videos.map((v) => v.video_id)).toEqual(["aaaaaaaaaa1", "ffffffffff7"]);
    expect(p.skipped).toBe(5);
    expect(p.continuation).toBe("SYNTHETIC_TOKEN");
    expect(p.videos[1]).toMatchObject({ channel: "Archive", thumbnail: "https://i.ytimg.com/vi/ffffffffff7/hqdefault.jpg", duration_seconds: 3723, view_count: 0, published_at: "2023-01-26T18:00:00Z", rank: 2 });
    expect(p.videos[0]!.description_snippet).toBe("We test batteries.");
  });
});

describe("youtube search failures are classified, never empty results", () => {
  it("the too-many-requests CAPTCHA page (HTTP 429) is rate_limited", () => {
    const out = youtube.parseResponse(answer(yt("www_youtube_too_many_requests.html"), 429, { "retry-after": "120" }), q());
    expect(out).toMatchObject({ ok: false, error: { class: "rate_limited", retryAfterSeconds: 120 } });
  });

  it("the CAPTCHA page served with 200 is rate_limited too", () => {
    const out = youtube.parseResponse(answer(yt("www_youtube_too_many_requests.html")), q());
    expect(out).toMatchObject({ ok: false, error: { class: "rate_limited" } });
  });

  it("the consent interstitial is blocked", () => {
    const out = youtube.parseResponse(answer(yt("www_youtube_consent_page.html")), q());
    expect(out).toMatchObject({ ok: false, error: { class: "blocked", message: expect.stringContaining("consent") } });
  });

  it("HTTP errors, InnerTube error bodies and garbage", () => {
    expect(youtube.parseResponse(answer("", 503), q())).toMatchObject({ ok: false, error: { class: "http" } });
    expect(youtube.parseResponse(answer("", 403), q())).toMatchObject({ ok: false, error: { class: "blocked" } });
    const apiError = JSON.stringify({ error: { code: 400, message: "Request contains an invalid argument.", status: "INVALID_ARGUMENT" } });
    expect(youtube.parseResponse(answer(apiError), q())).toMatchObject({ ok: false, error: { class: "http", message: expect.stringContaining("400") } });
    expect(youtube.parseResponse(answer("{not json"), q())).toMatchObject({ ok: false, error: { class: "parse" } });
    expect(youtube.parseResponse(answer(JSON.stringify({ responseContext: {} })), q())).toMatchObject({ ok: false, error: { class: "parse" } });
  });
});

describe("card values", () => {
  it("durations, view counts", () => {
    expect(parseDuration("5:04")).toBe(304);
    expect(parseDuration("8:02:54")).toBe(28974);
    expect(parseDuration("LIVE")).toBeNull();
    expect(parseViewCount("46,403,874 views")).toBe(46403874);
    expect(parseViewCount("1 view")).toBe(1);
    expect(parseViewCount("390k views")).toBe(390000);
    expect(parseViewCount("1.2M views")).toBe(1200000);
    expect(parseViewCount("1,234 watching")).toBeNull();
  });

  it("relative dates, calendar-aware for months and years", () => {
    const now = Date.UTC(2026, 2, 31, 12, 0, 0); // 31 March
    expect(relativeDateToIso("3 weeks ago", now)).toBe("2026-03-10T12:00:00Z");
    expect(relativeDateToIso("1 month ago", now)).toBe("2026-02-28T12:00:00Z");
    expect(relativeDateToIso("14 years ago", now)).toBe("2012-03-31T12:00:00Z");
    expect(relativeDateToIso("Premiered 2 hours ago", now)).toBe("2026-03-31T10:00:00Z");
    expect(relativeDateToIso("1 day ago", now)).toBe("2026-03-30T12:00:00Z");
    expect(relativeDateToIso("Scheduled for 2/28/26", now)).toBeNull();
  });
});
