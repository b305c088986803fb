/**
 * The `invidious` video backend: search through an Invidious instance's documented API
 * (https://docs.invidious.io/api/ — `GET {url}/api/v1/search?q=<q>&type=video&page=<n>`),
 * used only as the fallback when YouTube's InnerTube search fails. Off by default: enabled
 * only when the operator sets `QUARRY_INVIDIOUS_URL` (no default instance).
 * The answer is a JSON array of `{type:"video", title, videoId, author, authorId,
 * lengthSeconds, viewCount, published, publishedText, description, videoThumbnails[], liveNow,
 * isUpcoming}`. `published` (unix seconds) is computed by Invidious from YouTube's relative
 * "3 weeks ago" text, so dates stay marked approximate. Pages are numbered: the continuation
 * is the next page number while a page still has videos.
 * Shape: tests/fixtures/upstream/youtube/invidious_search_synthetic.json (documented schema).
 */
import type { Backend, BackendQuery, ParseOutcome } from "../types.ts";
import { languageParts, parseFailure, parseJson, upstreamUrl } from "../upstream.ts";
import { asArray, asBoolean, asCount, asRecord, asString, type JsonRecord } from "./json.ts";
import type { VideoItem, YoutubeQuery, YoutubeSearchPage } from "./search.ts";
import { isoSeconds } from "./values.ts";

const WATCH_URL = "https://www.youtube.com/watch?v=";

function thumbnail(video: JsonRecord, videoId: string): string {
  let best = "";
  let bestWidth = -1;
  for (const raw of asArray(video.videoThumbnails)) {
    const thumb = asRecord(raw);
    const url = asString(thumb?.url);
    const width = asCount(thumb?.width) ?? 0;
    if (url && /^https?:\/\//.test(url) && width > bestWidth) [best, bestWidth] = [url, width];
  }
  // Relative thumbnail URLs point at the instance's proxy; the public one is stable.
  return best || `https://i.ytimg.com/vi/${videoId}/hqdefault.jpg`;
}

function toVideoItem(video: JsonRecord, rank: number): VideoItem | null {
  const videoId = asString(video.videoId);
  if (!videoId || !/^[\w-]{11}$/.test(videoId)) return null;
  const published = typeof video.published === "number" && Number.isFinite(video.published) && video.published > 0 ? video.published : null;
  const length = asCount(video.lengthSeconds);
  return {
    video_id: videoId,
    title: (asString(video.title) ?? "").trim(),
    channel: (asString(video.author) ?? "").trim(),
    channel_id: asString(video.authorId) ?? "",
    url: WATCH_URL + videoId,
    thumbnail: thumbnail(video, videoId),
    duration_seconds: length !== null && length > 0 ? length : null,
    view_count: asCount(video.viewCount),
    published_at: published === null ? null : isoSeconds(published * 1000),
    published_approximate: published !== null,
    published_text: (asString(video.publishedText) ?? "").trim(),
    description_snippet: (asString(video.description) ?? "").replace(/\s+/g, " ").trim(),
    rank,
  };
}

/** Pure parser of one Invidious search page. */
export function parseInvidiousSearch(body: string, query: Pick<BackendQuery, "maxResults" | "page">): ParseOutcome<YoutubeSearchPage> {
  const json = parseJson(body);
  if (!json.ok) return { ok: false, error: parseFailure("Invidious search", "body is not JSON") };
  const error = asString(asRecord(json.value)?.error);
  if (error !== null) return { ok: false, error: { class: "http", message: `Invidious search error: ${error}` } };
  if (!Array.isArray(json.value)) return { ok: false, error: parseFailure("Invidious search", "body is not a JSON array") };

  const page: YoutubeSearchPage = { videos: [], continuation: null, estimated_results: null, skipped: 0 };
  for (const raw of json.value) {
    const item = asRecord(raw);
    if (!item || item.type !== "video" || asBoolean(item.liveNow) || asBoolean(item.isUpcoming)) {
      page.skipped++; // channels, playlists, live and scheduled streams
      continue;
    }
    if (page.videos.length >= query.maxResults) continue;
    const video = toVideoItem(item, page.videos.length + 1);
    if (video) page.videos.push(video);
    else page.skipped++;
  }
  if (json.value.length > 0) page.continuation = String((query.page ?? 1) + 1);
  return { ok: true, results: [page] };
}

export const invidious: Backend<YoutubeSearchPage> = {
  about: {
    id: "invidious",
    kind: "video",
    // No default instance: disabled until QUARRY_INVIDIOUS_URL names one.
    defaultBaseUrl: null,
    docs: "https://docs.invidious.io/api/",
  },

  buildRequest(query: YoutubeQuery, cfg) {
    const { region } = languageParts(query.language);
    const url = upstreamUrl(cfg.baseUrl, "/api/v1/search", {
      q: query.query,
      type: "video",
      page: query.page ?? 1,
      ...(region ? { region: region.toUpperCase() } : {}),
    });
    return new Request(url, { method: "GET", headers: { Accept: "application/json" } });
  },

  parseResponse(res, query: YoutubeQuery) {
    if (res.status < 200 || res.status >= 300) {
      return { ok: false, error: { class: "http", message: `Invidious search HTTP ${res.status}` } };
    }
    return parseInvidiousSearch(res.body, query);
  },
};
