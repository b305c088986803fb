import { describe, expect, it } from "vitest";
import { parsePlayerResponse, type PlayerInfo } from "../../core/backends/youtube/player.ts";
import { captionUrl, chooseCaptionTrack, needsPoToken, type CaptionChoice } from "../../core/backends/youtube/caption-tracks.ts";
import { buildPlayerRequest } from "../../core/backends/youtube/innertube.ts";
import { answer, yt } from "./helpers.ts";

function player(name: string): PlayerInfo {
  const out = parsePlayerResponse(answer(yt(name)));
  if (!out.ok) throw new Error(out.error.message);
  return out.player;
}

describe("player responses", () => {
  it("WEB (bare): tracks with {simpleText} names, exact dates from microformat", () => {
    const p = player("innertube_web_player_2isYuQZMbdU_captions.json");
    expect(p.playability).toEqual({ status: "ok" });
    expect(p.videoId).toBe("2isYuQZMbdU");
    expect(p.captionTracks).toHaveLength(15);
    expect(p.captionTracks.find((t) => t.languageCode === "en" && t.kind === "manual")).toMatchObject({ name: "English", isTranslatable: true });
    expect(p.captionTracks.find((t) => t.kind === "asr")).toMatchObject({ languageCode: "en", name: "English (auto-generated)" });
    expect(p.publishDate).toBe("2022-08-04T19:59:59Z"); // 12:59:59-07:00
    expect(p.uploadDate).toBe("2022-08-04T19:59:59Z");
    expect(p.lengthSeconds).toBe(930);
    expect(p.viewCount).toBe(220226287);
    expect(p.translationLanguages.length).toBeGreaterThan(100);
  });

  it("ANDROID: {runs} names, srv3 URLs, no microformat", () => {
    const p = player("innertube_android_player_GJLlxj_dtq8_ok.json");
    expect(p.captionTracks).toHaveLength(9);
    expect(p.captionTracks.map((t) => t.name)).toContain("English (auto-generated)");
    expect(p.captionTracks.every((t) => t.baseUrl.endsWith("&fmt=srv3"))).toBe(true);
    expect(p.publishDate).toBeNull();
    expect(p).toMatchObject({ lengthSeconds: 316, viewCount: 1856109, isLive: false });
  });

  it("the reel_item_watch {playerResponse} wrapper and VISIONOS read the same", () => {
    const reel = player("innertube_android_reel_item_watch_M4gD1WSo5mA_captions.json");
    const vision = player("innertube_visionos_player_M4gD1WSo5mA_captions.json");
    for (const p of [reel, vision]) {
      expect(p.videoId).toBe("M4gD1WSo5mA");
      expect(p.playability.status).toBe("ok");
      expect(p.captionTracks.map((t) => [t.languageCode, t.kind, t.name])).toEqual([
        ["en", "manual", "English"],
        ["en", "asr", "English (auto-generated)"],
      ]);
      expect(p.lengthSeconds).toBe(721);
    }
  });

  it("a field-masked WEB answer gives the exact publish date", () => {
    const p = player("innertube_web_player_M4gD1WSo5mA_fields_microformat.json");
    expect(p.playability.status).toBe("ok");
    expect(p.publishDate).toBe("2015-01-28T05:14:36Z");
  });

  it("error players", () => {
    expect(player("innertube_android_player_request_blocked.json").playability).toEqual({
      status: "login_required", reason: "bot", message: "Sign in to confirm you’re not a bot",
    });
    expect(player("innertube_android_player_age_restricted.json").playability).toMatchObject({ status: "login_required", reason: "age" });
    expect(player("innertube_android_player_unplayable.json").playability).toEqual({ status: "unplayable", message: "Custom Reason" });
    expect(player("innertube_android_player_video_unavailable.json").playability).toEqual({ status: "unavailable", message: "This video is unavailable" });
    const live = player("innertube_web_player_scheduled_live_offline.json");
    expect(live.playability).toMatchObject({ status: "live_offline", message: expect.stringContaining("will begin") });
    expect(live.publishDate).toBe("2023-02-27T00:00:00Z");
  });

  it("transcripts disabled: OK without a captions key", () => {
    for (const name of ["innertube_android_player_transcripts_disabled.json", "innertube_web_player_iuevw6218F0_no_captions.json"]) {
      const p = player(name);
      expect(p.playability.status).toBe("ok");
      expect(p.captionTracks).toEqual([]);
      expect(chooseCaptionTrack(p.captionTracks, "en", p.translationLanguages)).toBeNull();
    }
  });

  it("HTML pages and garbage are errors, not players", () => {
    expect(parsePlayerResponse(answer(yt("www_youtube_too_many_requests.html"), 429))).toMatchObject({ ok: false, error: { class: "rate_limited" } });
    expect(parsePlayerResponse(answer(yt("www_youtube_consent_page.html")))).toMatchObject({ ok: false, error: { class: "blocked" } });
    expect(parsePlayerResponse(answer("[]"))).toMatchObject({ ok: false, error: { class: "parse" } });
  });

  it("the player request uses the ANDROID client under the base URL", async () => {
    const req = buildPlayerRequest("http://replay.test/yt", "GJLlxj_dtq8", "pt-BR");
    expect(req.url).toBe("http://replay.test/yt/youtubei/v1/player?prettyPrint=false");
    const body = await req.json();
    expect(body).toMatchObject({ videoId: "GJLlxj_dtq8", context: { client: { clientName: "ANDROID", hl: "en", gl: "BR" } } });
  });
});

describe("caption track choice", () => {
  const web = player("innertube_web_player_2isYuQZMbdU_captions.json");
  const android = player("innertube_android_player_GJLlxj_dtq8_ok.json");
  const track = (c: CaptionChoice | null) => c && [c.track.languageCode, c.track.kind, c.translateTo];

  it("manual in the language, then its primary subtag, then ASR, then a translation", () => {
    expect(track(chooseCaptionTrack(web.captionTracks, "en", web.translationLanguages))).toEqual(["en", "manual", null]);
    expect(track(chooseCaptionTrack(web.captionTracks, "en-GB", web.translationLanguages))).toEqual(["en", "manual", null]);
    expect(track(chooseCaptionTrack(web.captionTracks, "zh-Hant", web.translationLanguages))).toEqual(["zh-Hant", "manual", null]);
    const asrOnly = web.captionTracks.filter((t) => t.kind === "asr");
    expect(track(chooseCaptionTrack(asrOnly, "en-US", web.translationLanguages))).toEqual(["en", "asr", null]);
    const choice = chooseCaptionTrack(android.captionTracks, "sw", ["sw", "de"]);
    expect(choice).toMatchObject({ track: { kind: "manual", isTranslatable: true }, translateTo: "sw" });
    expect(chooseCaptionTrack(android.captionTracks, "xx", ["de"])).toBeNull();
  });

  it("builds json3 URLs rebased to the configured base URL, with tlang for translations", () => {
    const choice = chooseCaptionTrack(android.captionTracks, "en", android.translationLanguages)!;
    const url = new URL(captionUrl(choice, "http://replay.test/yt")!);
    expect(url.origin + url.pathname).toBe("http://replay.test/yt/api/timedtext");
    expect(url.searchParams.get("fmt")).toBe("json3");
    expect(url.searchParams.get("v")).toBe("GJLlxj_dtq8");
    expect(url.searchParams.get("signature") ?? url.searchParams.get("sig")).not.toBeNull();
    const translated = new URL(captionUrl({ ...choice, translateTo: "de" }, "https://www.youtube.com")!);
    expect(translated.host).toBe("www.youtube.com");
    expect(translated.searchParams.get("tlang")).toBe("de");
  });

  it("a track whose URL carries exp=xpe needs a PO token", () => {
    const p = player("innertube_android_player_po_token_required.json");
    const choice = chooseCaptionTrack(p.captionTracks, "en", p.translationLanguages)!;
    expect(choice.track).toMatchObject({ languageCode: "en", kind: "manual" });
    expect(needsPoToken(choice.track.baseUrl)).toBe(true);
    expect(p.captionTracks.filter((t) => needsPoToken(t.baseUrl))).toHaveLength(1);
    expect(android.captionTracks.some((t) => needsPoToken(t.baseUrl))).toBe(false);
    expect(web.captionTracks.some((t) => needsPoToken(t.baseUrl))).toBe(false); // exp=xbt is something else
  });
});
