/**
 * One video's transcript: the player (ANDROID client) for its caption tracks, the best track
 * for the language, then the captions as json3. Every failure — blocked player, age gate,
 * no captions, a track that needs a PO token, an empty caption body, a network error or the
 * deadline — is a value (`segments: null` with a reason), never an exception: one missing
 * transcript must not fail the request.
 */
import { captionUrl, chooseCaptionTrack, needsPoToken } from "../../backends/youtube/caption-tracks.ts";
import { parseCaptions, type CaptionSegment } from "../../backends/youtube/caption-formats.ts";
import { buildPlayerRequest } from "../../backends/youtube/innertube.ts";
import { parsePlayerResponse, type PlayerInfo } from "../../backends/youtube/player.ts";
import type { FetchPort } from "../../ports.ts";

export interface TranscriptResult {
  segments: CaptionSegment[] | null;
  player: PlayerInfo | null;
  /** Why there is no transcript (said in the answer's meta.transcripts.missing). */
  reason?: string;
  /** Whether YouTube itself failed (an error status, a block, a network error), for /health; unset when not asked or cut by the deadline. */
  upstreamFailed?: boolean;
}

export interface TranscriptIo {
  fetch: FetchPort;
  /** The youtube backend's base URL (api.md §1): players and captions are fetched under it. */
  baseUrl: string;
  signal: AbortSignal;
}

async function fetchText(io: TranscriptIo, request: Request | string): Promise<{ status: number; headers: Headers; body: string } | string> {
  try {
    const res = await io.fetch(request, { signal: io.signal });
    return { status: res.status, headers: res.headers, body: await res.text() };
  } catch (err) {
    return io.signal.aborted ? "deadline reached" : `network: ${err instanceof Error ? err.message : String(err)}`;
  }
}

export async function fetchTranscript(io: TranscriptIo, videoId: string, language: string): Promise<TranscriptResult> {
  const { upstreamFailed, ...result } = await transcriptOf(io, videoId, language);
  // Cut by the request's own deadline: no evidence either way about YouTube.
  return io.signal.aborted ? result : { ...result, upstreamFailed: upstreamFailed ?? false };
}

async function transcriptOf(io: TranscriptIo, videoId: string, language: string): Promise<TranscriptResult> {
  const playerAnswer = await fetchText(io, buildPlayerRequest(io.baseUrl, videoId, language));
  if (typeof playerAnswer === "string") return { segments: null, player: null, reason: `player ${playerAnswer}`, upstreamFailed: true };
  const parsed = parsePlayerResponse(playerAnswer);
  if (!parsed.ok) return { segments: null, player: null, reason: `player ${parsed.error.class}: ${parsed.error.message}`, upstreamFailed: true };
  const { player } = parsed;
  if (player.playability.status !== "ok") {
    const bot = player.playability.status === "login_required" && player.playability.reason === "bot";
    const detail = player.playability.status === "login_required" ? ` (${player.playability.reason})` : "";
    return { segments: null, player, reason: `not playable: ${player.playability.status}${detail}`, upstreamFailed: bot };
  }
  const choice = chooseCaptionTrack(player.captionTracks, language, player.translationLanguages);
  if (!choice) return { segments: null, player, reason: player.captionTracks.length ? `no track for ${language}` : "no captions" };
  if (needsPoToken(choice.track.baseUrl)) return { segments: null, player, reason: "caption track needs a PO token" };
  const url = captionUrl(choice, io.baseUrl);
  if (!url) return { segments: null, player, reason: "caption URL unusable" };

  const captions = await fetchText(io, url);
  if (typeof captions === "string") return { segments: null, player, reason: `captions ${captions}`, upstreamFailed: true };
  if (captions.status !== 200) return { segments: null, player, reason: `captions HTTP ${captions.status}`, upstreamFailed: true };
  const segments = parseCaptions(captions.body);
  if (!segments || segments.length === 0) return { segments: null, player, reason: "captions empty or unreadable" };
  return { segments, player };
}

export interface TranscriptSummary {
  found: number;
  missing: Array<{ video_id: string; reason: string }>;
}

/**
 * What became of the transcripts asked for, for meta.transcripts: a null transcript_snippet
 * alone cannot tell a video without captions from a player or caption request that failed
 * (worth retrying), so each missing one is named with its reason.
 */
export function summarizeTranscripts(items: ReadonlyArray<{ video_id: string; transcript: TranscriptResult }>): TranscriptSummary {
  const missing = items.filter((i) => !i.transcript.segments).map((i) => ({ video_id: i.video_id, reason: i.transcript.reason ?? "no transcript" }));
  return { found: items.length - missing.length, missing };
}
