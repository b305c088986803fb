/**
 * InnerTube request builders: the JSON API YouTube's own clients call. No key is needed; a
 * client context names the client. Search uses the WEB client (the recorded search pages are
 * WEB answers); the player uses the ANDROID client, whose answers carry caption tracks
 * without the web player's attestation. Builders do no I/O.
 * Request shapes as recorded in tests/fixtures/upstream/SOURCES.tsv (youtube rows).
 */
import type { Freshness } from "../types.ts";
import { languageParts, upstreamUrl } from "../upstream.ts";

export const WEB_CLIENT = { clientName: "WEB", clientVersion: "2.20260123.01.00" } as const;
/** 1 is WEB's numeric client id (the `X-YouTube-Client-Name` header). */
const WEB_CLIENT_ID = "1";
export const ANDROID_CLIENT = { clientName: "ANDROID", clientVersion: "20.10.38", androidSdkVersion: 30 } as const;
const ANDROID_CLIENT_ID = "3";

/**
 * Interface language and region. The interface stays English whatever the transcript
 * language: the card texts ("3 weeks ago", "1,234 views") are parsed, and only English is.
 */
export function clientLocale(language: string): { hl: string; gl: string } {
  const { region } = languageParts(language);
  return { hl: "en", gl: (region ?? "us").toUpperCase() };
}

/** Upload-date values of the search filter message (field 1). */
const UPLOAD_DATE: Record<Freshness, number> = { day: 2, week: 3, month: 4, year: 5 };
/** Duration values of the search filter message (field 3): under 4 min, over 20 min, 4–20 min. */
export type DurationBucket = "short" | "long" | "medium";
const DURATION: Record<DurationBucket, number> = { short: 1, long: 2, medium: 3 };

export interface SearchFilters {
  freshness?: Freshness | null;
  duration?: DurationBucket | null;
}

function base64(bytes: number[]): string {
  return btoa(String.fromCharCode(...bytes));
}

/**
 * The `params` of a search request: a small protobuf. Field 2 holds the filters (1 upload
 * date, 2 type = 1 video, 3 duration); top-level field 30 = 1 is what the web client sends
 * with the video filter. Sent percent-encoded, as the web client copies it from its `sp=`
 * URL parameter: without date or duration this is exactly the recorded `EgIQAfABAQ%3D%3D`.
 * Every value fits in one varint byte, so the encoding is done by hand.
 */
export function searchParams(filters: SearchFilters = {}): string {
  const inner: number[] = [];
  if (filters.freshness) inner.push(0x08, UPLOAD_DATE[filters.freshness]);
  inner.push(0x10, 0x01);
  if (filters.duration) inner.push(0x18, DURATION[filters.duration]);
  return encodeURIComponent(base64([0x12, inner.length, ...inner, 0xf0, 0x01, 0x01]));
}

/**
 * The duration bucket that can only narrow the upstream's answer, never drop a video the
 * exact filter would keep: a bucket is used only when the requested range lies strictly
 * inside it, so YouTube's own boundary rounding cannot matter.
 */
export function durationBucket(min: number | null, max: number | null): DurationBucket | null {
  if (min !== null && min > 20 * 60) return "long";
  if (max !== null && max < 4 * 60) return "short";
  if (min !== null && max !== null && min > 4 * 60 && max < 20 * 60) return "medium";
  return null;
}

function innertubeHeaders(clientId: string, clientVersion: string, language: string): HeadersInit {
  return {
    "content-type": "application/json",
    accept: "application/json",
    "accept-language": language,
    "x-youtube-client-name": clientId,
    "x-youtube-client-version": clientVersion,
  };
}

export interface SearchRequestInput {
  query: string;
  language: string;
  filters?: SearchFilters;
  /** Token of a continuation page; the query and filters are then carried by the token. */
  continuation?: string | null;
}

/** POST /youtubei/v1/search?prettyPrint=false with the WEB client context. */
export function buildSearchRequest(baseUrl: string, input: SearchRequestInput): Request {
  const context = { client: { ...WEB_CLIENT, ...clientLocale(input.language) } };
  const body = input.continuation
    ? { context, continuation: input.continuation }
    : { context, query: input.query, params: searchParams(input.filters) };
  return new Request(upstreamUrl(baseUrl, "/youtubei/v1/search", { prettyPrint: "false" }), {
    method: "POST",
    headers: innertubeHeaders(WEB_CLIENT_ID, WEB_CLIENT.clientVersion, input.language),
    body: JSON.stringify(body),
  });
}

/** POST /youtubei/v1/player?prettyPrint=false with the ANDROID client context. */
export function buildPlayerRequest(baseUrl: string, videoId: string, language: string): Request {
  const context = { client: { ...ANDROID_CLIENT, ...clientLocale(language) } };
  return new Request(upstreamUrl(baseUrl, "/youtubei/v1/player", { prettyPrint: "false" }), {
    method: "POST",
    headers: innertubeHeaders(ANDROID_CLIENT_ID, ANDROID_CLIENT.clientVersion, language),
    body: JSON.stringify({ context, videoId, contentCheckOk: true, racyCheckOk: true }),
  });
}
