/**
 * Player responses (POST /youtubei/v1/player, or the `reel_item_watch` answer that wraps one
 * as `{playerResponse: …}`) reduced to what the video operation needs: whether the video can
 * be watched, its caption tracks, exact dates (WEB `microformat` only; ANDROID and VISIONOS
 * answers have none), length and views.
 * Shapes: tests/fixtures/upstream/youtube/innertube_*player*.json.
 */
import type { BackendError, UpstreamResponse } from "../types.ts";
import { parseFailure, parseJson, toIsoUtc } from "../upstream.ts";
import { youtubeFailure } from "./blocks.ts";
import { asArray, asBoolean, asCount, asRecord, asString, at, textOf, type JsonRecord } from "./json.ts";

/**
 * `login_required` covers two different things that share a status: a bot block of our
 * address (reason "Sign in to confirm you're not a bot") and an age gate; `other` is the
 * rest (private videos, members-only).
 */
export type Playability =
  | { status: "ok" }
  | { status: "login_required"; reason: "bot" | "age" | "other"; message: string }
  | { status: "unplayable"; message: string }
  | { status: "unavailable"; message: string }
  | { status: "live_offline"; message: string };

export interface CaptionTrack {
  /** YouTube's code: BCP-47-like (`en`, `pt-BR`, `zh-Hant`). */
  languageCode: string;
  kind: "asr" | "manual";
  name: string;
  baseUrl: string;
  isTranslatable: boolean;
}

export interface PlayerInfo {
  videoId: string | null;
  playability: Playability;
  captionTracks: CaptionTrack[];
  /** Target codes a translatable track may be translated into (`&tlang=`). */
  translationLanguages: string[];
  /** ISO 8601 UTC from the WEB microformat; null from clients without it. */
  publishDate: string | null;
  uploadDate: string | null;
  lengthSeconds: number | null;
  viewCount: number | null;
  isLive: boolean;
}

export type PlayerOutcome = { ok: true; player: PlayerInfo } | { ok: false; error: BackendError };

function playabilityOf(status: JsonRecord | null): Playability {
  // A field-masked answer (`$fields=microformat,…`) has no playabilityStatus: nothing says it is blocked.
  if (!status) return { status: "ok" };
  const code = asString(status.status) ?? "OK";
  const message = (asString(status.reason) ?? textOf(at(status, "errorScreen", "playerErrorMessageRenderer", "reason"))).trim();
  switch (code) {
    case "OK":
      return { status: "ok" };
    case "LOGIN_REQUIRED": {
      const reason = /not a bot|unusual traffic/i.test(message)
        ? "bot"
        : /inappropriate|age[- ]restricted|confirm your age|\bage\b/i.test(message)
          ? "age"
          : "other";
      return { status: "login_required", reason, message };
    }
    case "ERROR":
      return { status: "unavailable", message: message || "This video is unavailable" };
    case "LIVE_STREAM_OFFLINE":
      return { status: "live_offline", message };
    default: // UNPLAYABLE, CONTENT_CHECK_REQUIRED, AGE_CHECK_REQUIRED, CUSTOM, …
      return { status: "unplayable", message: message || code };
  }
}

function captionTracksOf(root: JsonRecord): { tracks: CaptionTrack[]; translations: string[] } {
  const list = at(root, "captions", "playerCaptionsTracklistRenderer");
  const tracks: CaptionTrack[] = [];
  for (const raw of asArray(at(list, "captionTracks"))) {
    const track = asRecord(raw);
    const baseUrl = asString(track?.baseUrl);
    const languageCode = asString(track?.languageCode);
    if (!track || !baseUrl || !languageCode) continue;
    tracks.push({
      languageCode,
      kind: asString(track.kind) === "asr" ? "asr" : "manual",
      name: textOf(track.name).trim(),
      baseUrl,
      isTranslatable: asBoolean(track.isTranslatable),
    });
  }
  const translations = asArray(at(list, "translationLanguages"))
    .map((l) => asString(asRecord(l)?.languageCode))
    .filter((code): code is string => code !== null);
  return { tracks, translations };
}

/** Parses a player JSON value (bare, or wrapped in `playerResponse`). */
export function parsePlayerValue(value: unknown): PlayerInfo | null {
  const outer = asRecord(value);
  if (!outer) return null;
  const root = asRecord(outer.playerResponse) ?? outer;
  if (!root.playabilityStatus && !root.videoDetails && !root.microformat) return null;
  const details = asRecord(root.videoDetails);
  const micro = asRecord(at(root, "microformat", "playerMicroformatRenderer"));
  const { tracks, translations } = captionTracksOf(root);
  return {
    videoId: asString(details?.videoId),
    playability: playabilityOf(asRecord(root.playabilityStatus)),
    captionTracks: tracks,
    translationLanguages: translations,
    publishDate: toIsoUtc(micro?.publishDate),
    uploadDate: toIsoUtc(micro?.uploadDate),
    lengthSeconds: asCount(details?.lengthSeconds) ?? asCount(micro?.lengthSeconds),
    viewCount: asCount(details?.viewCount) ?? asCount(micro?.viewCount),
    isLive: asBoolean(details?.isLive) || asBoolean(at(micro, "liveBroadcastDetails", "isLiveNow")),
  };
}

/** Pure parser of a player answer; HTML blocks and HTTP failures come back as errors. */
export function parsePlayerResponse(res: UpstreamResponse): PlayerOutcome {
  const failure = youtubeFailure(res, "YouTube player");
  if (failure) return { ok: false, error: failure };
  const json = parseJson(res.body);
  const player = json.ok ? parsePlayerValue(json.value) : null;
  if (!player) return { ok: false, error: parseFailure("YouTube player", "not a player response") };
  return { ok: true, player };
}
