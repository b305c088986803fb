/**
 * The `youtube` backend: InnerTube search with the video filter, first pages and
 * continuation pages. The parser keeps plain videos and leaves out Shorts, live and upcoming
 * streams and the recommendation shelves YouTube mixes into results ("Popular in …",
 * "Channels new to you"), which are not answers to the query.
 * Shapes: tests/fixtures/upstream/youtube/innertube_web_search_*.json (2026 WEB answers).
 */
import type { Backend, BackendQuery, ParseOutcome } from "../types.ts";
import { parseFailure, parseJson } from "../upstream.ts";
import { youtubeFailure } from "./blocks.ts";
import { buildSearchRequest, durationBucket, type DurationBucket } from "./innertube.ts";
import { asArray, asCount, asRecord, asString, at, textOf } from "./json.ts";
import { parseDuration, parseViewCount, relativeDateToIso } from "./values.ts";

export interface VideoItem {
  video_id: string;
  title: string;
  channel: string;
  channel_id: string;
  /** Public watch URL (never rebased: it is for the reader, not fetched by us). */
  url: string;
  thumbnail: string;
  duration_seconds: number | null;
  view_count: number | null;
  /** ISO 8601 UTC; derived from `published_text` when the card has no exact date. */
  published_at: string | null;
  /** True when `published_at` comes from relative text such as "3 weeks ago". */
  published_approximate: boolean;
  published_text: string;
  description_snippet: string;
  /** 1-based position within the page it came from. */
  rank: number;
}

export interface YoutubeSearchPage {
  videos: VideoItem[];
  /** Token for the next page; null on the last one. */
  continuation: string | null;
  estimated_results: number | null;
  /** Items seen but left out (Shorts, live, upcoming, shelves). */
  skipped: number;
}

/** What the operation passes the runner: the query plus the page to fetch and the clock. */
export interface YoutubeQuery extends BackendQuery {
  continuation?: string | null;
  /** Exact-filter bounds, used to narrow the upstream's answer where that is safe. */
  minDuration?: number | null;
  maxDuration?: number | null;
  /** Clock time the relative dates are measured from; without it `published_at` stays null. */
  now?: number;
}

const WATCH_URL = "https://www.youtube.com/watch?v=";

/** Live now or scheduled: no fixed length, nothing to transcribe yet. */
function isLiveOrUpcoming(video: Record<string, unknown>): boolean {
  if (video.upcomingEventData !== undefined) return true;
  for (const badge of asArray(video.badges)) {
    const style = asString(at(badge, "metadataBadgeRenderer", "style")) ?? "";
    const label = asString(at(badge, "metadataBadgeRenderer", "label")) ?? "";
    if (style === "BADGE_STYLE_TYPE_LIVE_NOW" || /^live$/i.test(label)) return true;
  }
  for (const overlay of asArray(video.thumbnailOverlays)) {
    const style = asString(at(overlay, "thumbnailOverlayTimeStatusRenderer", "style"));
    if (style === "LIVE" || style === "UPCOMING") return true;
  }
  return /watching/i.test(textOf(video.viewCountText));
}

/** A videoRenderer that is really a Short (served in some layouts instead of a reel item). */
function isShort(video: Record<string, unknown>): boolean {
  if (at(video, "navigationEndpoint", "reelWatchEndpoint") !== null) return true;
  const url = asString(at(video, "navigationEndpoint", "commandMetadata", "webCommandMetadata", "url")) ?? "";
  if (url.startsWith("/shorts/")) return true;
  return asArray(video.thumbnailOverlays).some(
    (o) => asString(at(o, "thumbnailOverlayTimeStatusRenderer", "style")) === "SHORTS",
  );
}

function largestThumbnail(video: Record<string, unknown>, videoId: string): string {
  let best = "";
  let bestWidth = -1;
  for (const thumb of asArray(at(video, "thumbnail", "thumbnails"))) {
    const url = asString(asRecord(thumb)?.url);
    const width = asCount(asRecord(thumb)?.width) ?? 0;
    if (url && width > bestWidth) [best, bestWidth] = [url, width];
  }
  if (best.startsWith("//")) best = `https:${best}`;
  return best || `https://i.ytimg.com/vi/${videoId}/hqdefault.jpg`;
}

function descriptionSnippet(video: Record<string, unknown>): string {
  const detailed = at(video, "detailedMetadataSnippets", 0, "snippetText");
  return textOf(detailed ?? video.descriptionSnippet).replace(/\s+/g, " ").trim();
}

function toVideoItem(video: Record<string, unknown>, rank: number, now: number | undefined): VideoItem | null {
  const videoId = asString(video.videoId);
  if (!videoId || !/^[\w-]{11}$/.test(videoId)) return null;
  const owner = at(video, "ownerText", "runs", 0) ?? at(video, "longBylineText", "runs", 0);
  const publishedText = textOf(video.publishedTimeText).trim();
  const publishedAt = now === undefined ? null : relativeDateToIso(publishedText, now);
  return {
    video_id: videoId,
    title: textOf(video.title).trim(),
    channel: textOf(owner).trim(),
    channel_id: asString(at(owner, "navigationEndpoint", "browseEndpoint", "browseId")) ?? "",
    url: WATCH_URL + videoId,
    thumbnail: largestThumbnail(video, videoId),
    duration_seconds: parseDuration(textOf(video.lengthText)),
    view_count: parseViewCount(textOf(video.viewCountText)) ?? parseViewCount(textOf(video.shortViewCountText)),
    published_at: publishedAt,
    published_approximate: publishedAt !== null,
    published_text: publishedText,
    description_snippet: descriptionSnippet(video),
    rank,
  };
}

/** The item sections of a first page or of a continuation page, and the continuation items. */
function sections(root: Record<string, unknown>): unknown[] {
  const first = at(root, "contents", "twoColumnSearchResultsRenderer", "primaryContents", "sectionListRenderer", "contents");
  if (Array.isArray(first)) return first;
  const out: unknown[] = [];
  for (const command of asArray(root.onResponseReceivedCommands)) {
    const items =
      at(command, "appendContinuationItemsAction", "continuationItems") ??
      at(command, "reloadContinuationItemsCommand", "continuationItems");
    out.push(...asArray(items));
  }
  return out;
}

/**
 * A first page holds its sections under twoColumnSearchResultsRenderer (a search with no hits
 * too, whose one section says so); a continuation page holds continuation commands. Any other
 * `contents` is a layout this parser does not know, a failure to report rather than "no videos".
 */
function hasResultsShape(root: Record<string, unknown>): boolean {
  const first = at(root, "contents", "twoColumnSearchResultsRenderer", "primaryContents", "sectionListRenderer", "contents");
  return Array.isArray(first) || Array.isArray(root.onResponseReceivedCommands);
}

/** Pure parser of a search page or continuation page body. */
export function parseSearchPage(body: string, query: Pick<YoutubeQuery, "maxResults" | "now">): ParseOutcome<YoutubeSearchPage> {
  const json = parseJson(body);
  const root = json.ok ? asRecord(json.value) : null;
  if (!root) return { ok: false, error: parseFailure("YouTube search", "body is not a JSON object") };
  const apiError = asRecord(root.error);
  if (apiError) {
    const message = asString(apiError.message) ?? "unknown error";
    return { ok: false, error: { class: "http", message: `YouTube search error ${asCount(apiError.code) ?? "?"}: ${message}` } };
  }
  if (!hasResultsShape(root)) return { ok: false, error: parseFailure("YouTube search", "neither the search results layout nor continuation items (has YouTube changed its answer?)") };

  const page: YoutubeSearchPage = { videos: [], continuation: null, estimated_results: asCount(root.estimatedResults), skipped: 0 };
  for (const section of sections(root)) {
    const token = asString(at(section, "continuationItemRenderer", "continuationEndpoint", "continuationCommand", "token"));
    if (token) page.continuation = token;
    for (const item of asArray(at(section, "itemSectionRenderer", "contents"))) {
      const video = asRecord(asRecord(item)?.videoRenderer);
      if (!video || isShort(video) || isLiveOrUpcoming(video)) {
        page.skipped++; // shelves, Shorts (reelShelfRenderer, shortsLockupViewModel), channels, ads, live
        continue;
      }
      if (page.videos.length >= query.maxResults) continue;
      const parsed = toVideoItem(video, page.videos.length + 1, query.now);
      if (parsed) page.videos.push(parsed);
      else page.skipped++;
    }
  }
  return { ok: true, results: [page] };
}

export const youtube: Backend<YoutubeSearchPage> = {
  about: {
    id: "youtube",
    kind: "video",
    defaultBaseUrl: "https://www.youtube.com",
    // InnerTube is undocumented; YouTube.js is the most complete public description of it.
    docs: "https://github.com/LuanRT/YouTube.js",
  },

  buildRequest(query: YoutubeQuery, cfg) {
    const duration: DurationBucket | null = durationBucket(query.minDuration ?? null, query.maxDuration ?? null);
    return buildSearchRequest(cfg.baseUrl, {
      query: query.query,
      language: query.language,
      filters: { freshness: query.freshness, duration },
      continuation: query.continuation ?? null,
    });
  },

  /** One page per answer: `results` holds exactly one YoutubeSearchPage. */
  parseResponse(res, query: YoutubeQuery) {
    const failure = youtubeFailure(res, "YouTube search");
    if (failure) return { ok: false, error: failure };
    return parseSearchPage(res.body, query);
  },
};
