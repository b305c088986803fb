/**
 * YouTube Data API v3 `videos.list` (https://developers.google.com/youtube/v3/docs/videos/list):
 * exact upload dates, view counts and durations for the ids a search found. Optional and off by
 * default: used only when the operator sets `QUARRY_YOUTUBE_KEY`. One call per search,
 * `GET {base}/youtube/v3/videos?part=snippet,statistics,contentDetails&id=<ids>&key=<key>`
 * (quota cost 1 unit; at most 50 ids). The base URL defaults to `https://www.googleapis.com`
 * (DATA_API_BASE); the operation takes another base only from its deps (tests, a proxy), the
 * way every upstream base here is rebasable. Builder and parser are pure; the key travels in
 * the URL, so neither puts the URL into an error message.
 * Shape: tests/fixtures/upstream/youtube/data_api_videos_list_synthetic.json (documented schema).
 */
import { parseJson, upstreamUrl } from "../upstream.ts";
import { asArray, asCount, asRecord, asString, at } from "./json.ts";
import { isoSeconds } from "./values.ts";

export const DATA_API_BASE = "https://www.googleapis.com";
/** videos.list accepts at most 50 ids per call. */
export const DATA_API_MAX_IDS = 50;

export interface DataApiVideo {
  id: string;
  /** snippet.publishedAt as seconds-precision ISO 8601 UTC; null when missing or unreadable. */
  published_at: string | null;
  /** statistics.viewCount (a decimal string in the API); null when hidden or missing. */
  view_count: number | null;
  /** contentDetails.duration (ISO 8601, e.g. PT1H2M3S) in seconds; null when unreadable. */
  duration_seconds: number | null;
}

export type DataApiOutcome = { ok: true; videos: Map<string, DataApiVideo> } | { ok: false; error: string };

export function buildVideosRequest(baseUrl: string, ids: readonly string[], key: string): Request {
  const url = upstreamUrl(baseUrl, "/youtube/v3/videos", {
    part: "snippet,statistics,contentDetails",
    id: ids.slice(0, DATA_API_MAX_IDS).join(","),
    key,
  });
  return new Request(url, { method: "GET", headers: { Accept: "application/json" } });
}

/** "PT1H2M3S" → 3723, "P1DT2S" → 86402, "PT0S"/"P0D" (live) → 0; null for anything else (weeks, months, fractions). */
export function parseIsoDuration(text: string): number | null {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(text);
  if (!m || text === "P" || text.endsWith("T")) return null;
  const [, d = "0", h = "0", min = "0", s = "0"] = m;
  return Number(d) * 86_400 + Number(h) * 3_600 + Number(min) * 60 + Number(s);
}

function exactDate(value: unknown): string | null {
  const text = asString(value);
  if (!text || !/^\d{4}-\d{2}-\d{2}T/.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? isoSeconds(ms) : null;
}

/** Pure parser of a videos.list answer (any status: errors come back as `{error:{code,message}}`). */
export function parseVideosResponse(status: number, body: string): DataApiOutcome {
  const json = parseJson(body);
  const root = json.ok ? asRecord(json.value) : null;
  const apiError = asRecord(root?.error);
  if (status < 200 || status >= 300 || apiError) {
    const reason = asString(at(apiError, "errors", 0, "reason")) ?? asString(apiError?.message) ?? "no error body";
    return { ok: false, error: `YouTube Data API HTTP ${status}: ${reason}` };
  }
  if (!root || !Array.isArray(root.items)) return { ok: false, error: "YouTube Data API: answer has no items array" };
  const videos = new Map<string, DataApiVideo>();
  for (const raw of asArray(root.items)) {
    const item = asRecord(raw);
    const id = asString(item?.id);
    if (!item || !id) continue;
    const duration = asString(at(item, "contentDetails", "duration"));
    videos.set(id, {
      id,
      published_at: exactDate(at(item, "snippet", "publishedAt")),
      view_count: asCount(at(item, "statistics", "viewCount")),
      duration_seconds: duration === null ? null : parseIsoDuration(duration),
    });
  }
  return { ok: true, videos };
}
