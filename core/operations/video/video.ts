/**
 * POST /v1/video/search orchestration: search pages through the runner (following
 * continuation pages until enough videos pass the exact filters), transcripts of the
 * candidates fetched concurrently under the request's deadline, token-budgeted excerpts,
 * scores, and the response in the spec's shape. A failed search throws the 502/504 ApiError
 * (with each backend's status); a failed transcript is only that result's null snippet.
 * Two optional extras, both off unless configured: when the InnerTube search fails on its
 * first page and an Invidious instance is configured (`fallback`), the search runs there
 * instead (both reported in meta.backends); with a Data API key (`youtubeData`), one
 * videos.list call replaces approximate dates and view counts with exact ones.
 */
import { loadLibraries } from "../../lazy.ts";
import type { RegistryEntry, BackendRegistry } from "../../backends/registry.ts";
import { failedRunExtra, type BackendRunner, type BackendRunStatus, type Timers } from "../../backends/runner.ts";
import type { VideoItem, YoutubeQuery, YoutubeSearchPage } from "../../backends/youtube/search.ts";
import { countTokens } from "../../budget/tokens.ts";
import { transcriptDigest } from "../../budget/transcript-excerpt.ts";
import { ApiError } from "../../errors.ts";
import type { Clock, FetchPort } from "../../ports.ts";
import { passesFilters, type VideoFilters } from "./filters.ts";
import type { VideoResultBody, VideoSearchRequest, VideoSearchResponseBody } from "./schema.ts";
import { scoreVideos } from "./score.ts";
import { fetchTranscript, summarizeTranscripts, type TranscriptResult } from "./transcripts.ts";
import { DATA_API_BACKEND, fetchVideoDetails, type DataApiSettings, type EnrichOutcome } from "./enrich.ts";
import { pool } from "../../pool.ts";

export const VIDEO_BACKEND = "youtube";
export const FALLBACK_BACKEND = "invidious";

export interface VideoSearchDeps {
  /** A runner over a registry that holds the `youtube` backend. */
  runner: BackendRunner;
  registry: BackendRegistry;
  fetch: FetchPort;
  clock: Clock;
  timers?: Timers;
  /** The whole operation's deadline, in ms from its start (default 15000). */
  deadlineMs?: number;
  /** Search pages followed at most (default 4: ~80 videos before filtering). */
  maxPages?: number;
  /** Videos whose transcripts are fetched at the same time (default 6). */
  concurrency?: number;
  /** A runner over a registry holding the `invidious` backend, tried when InnerTube search fails. */
  fallback?: { runner: BackendRunner; registry: BackendRegistry };
  /** YouTube Data API v3 enrichment (QUARRY_YOUTUBE_KEY); off when absent. */
  youtubeData?: DataApiSettings;
}

export type VideoSearchFailure = {
  code: "upstream_error" | "timeout";
  message: string;
  backends: Record<string, BackendRunStatus>;
};

/** A failed search as the API error it answers with: 502/504, each backend's status attached. */
export function videoSearchError(failure: VideoSearchFailure, now: number = Date.now()): ApiError {
  return new ApiError(failure.code, failure.message, failedRunExtra(failure.backends, now));
}

const GLOBAL_TIMERS: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Leaves this long before the deadline for excerpts and the answer itself. */
const ANSWER_RESERVE_MS = 300;

interface Collected {
  videos: VideoItem[];
  status: BackendRunStatus;
  failure: VideoSearchFailure | null;
}

async function collectVideos(
  deps: VideoSearchDeps,
  req: VideoSearchRequest,
  filters: VideoFilters,
  start: number,
  deadline: number,
  runner: BackendRunner = deps.runner,
  backendId: string = VIDEO_BACKEND,
): Promise<Collected> {
  const maxPages = deps.maxPages ?? 4;
  const seen = new Set<string>();
  const kept: VideoItem[] = [];
  let offset = 0;
  let continuation: string | null = null;
  const total: BackendRunStatus = { status: "ok", results: 0, latency_ms: 0 };

  for (let page = 1; page <= maxPages; page++) {
    const query: YoutubeQuery = {
      query: req.query,
      maxResults: 100,
      language: req.language,
      freshness: req.freshness ?? null,
      minDuration: filters.minDuration,
      maxDuration: filters.maxDuration,
      now: start,
      continuation,
      page,
    };
    const run = await runner.run<YoutubeSearchPage>({ query, kind: "video", backends: [backendId], deadline });
    const status = run.backends[backendId] ?? { status: "disabled", results: 0, latency_ms: 0, error: "not registered" };
    total.latency_ms += status.latency_ms;
    const answer = run.results[backendId]?.[0];
    if (status.status !== "ok" || !answer) {
      if (page === 1) {
        const code = status.status === "timeout" ? "timeout" : "upstream_error";
        const message = `The video search backend failed (${backendId}: ${status.error ?? status.status}).`;
        return { videos: [], status: { ...status, latency_ms: total.latency_ms }, failure: { code, message, backends: { [backendId]: status } } };
      }
      total.error = `page ${page}: ${status.error ?? status.status}`; // keep what earlier pages gave
      break;
    }
    for (const video of answer.videos) {
      if (seen.has(video.video_id)) continue;
      seen.add(video.video_id);
      total.results++;
      const ranked = { ...video, rank: offset + video.rank };
      if (ranked.duration_seconds !== null && passesFilters(ranked, filters, start)) kept.push(ranked);
    }
    offset += answer.videos.length;
    continuation = answer.continuation;
    if (kept.length >= req.max_results || !continuation || deps.clock.now() >= deadline - ANSWER_RESERVE_MS) break;
  }
  return { videos: kept.slice(0, req.max_results), status: total, failure: null };
}

async function fetchTranscripts(deps: VideoSearchDeps, entry: RegistryEntry, videos: readonly VideoItem[], language: string, deadline: number): Promise<TranscriptResult[]> {
  const none = videos.map((): TranscriptResult => ({ segments: null, player: null, reason: "not fetched" }));
  if (!entry.enabled || videos.length === 0) return none;
  const timers = deps.timers ?? GLOBAL_TIMERS;
  const controller = new AbortController();
  const results: (TranscriptResult | undefined)[] = new Array(videos.length);
  let handle: unknown;
  const expired = new Promise<void>((resolve) => {
    handle = timers.set(() => {
      controller.abort();
      resolve();
    }, Math.max(0, deadline - ANSWER_RESERVE_MS - deps.clock.now()));
  });
  const io = { fetch: deps.fetch, baseUrl: entry.config.baseUrl, signal: controller.signal };
  const work = pool(videos.map((v, i) => [v, i] as const), deps.concurrency ?? 6, async ([video, i]) => {
    if (controller.signal.aborted) return;
    const result = await fetchTranscript(io, video.video_id, language);
    if (!controller.signal.aborted) results[i] = result;
  });
  // Whatever has not arrived by the deadline stays null; fetches that ignore the abort are left behind.
  await Promise.race([work, expired]);
  timers.clear(handle);
  return none.map((fallback, i) => results[i] ?? { ...fallback, reason: "deadline reached" });
}

type CollectedAll = { ok: true; videos: VideoItem[]; backends: Record<string, BackendRunStatus> } | { ok: false; failure: VideoSearchFailure };

/** InnerTube first; when its first page fails and an Invidious instance is configured, Invidious. */
async function collectWithFallback(deps: VideoSearchDeps, req: VideoSearchRequest, filters: VideoFilters, start: number, deadline: number): Promise<CollectedAll> {
  const primary = await collectVideos(deps, req, filters, start, deadline);
  if (!primary.failure) return { ok: true, videos: primary.videos, backends: { [VIDEO_BACKEND]: primary.status } };
  const fallback = deps.fallback;
  const entry = fallback?.registry.get(FALLBACK_BACKEND);
  if (!fallback || !entry?.enabled || deps.clock.now() >= deadline - ANSWER_RESERVE_MS) return { ok: false, failure: primary.failure };
  const second = await collectVideos(deps, req, filters, start, deadline, fallback.runner, FALLBACK_BACKEND);
  const backends = { [VIDEO_BACKEND]: primary.status, [FALLBACK_BACKEND]: second.status };
  if (second.failure) {
    const message = `The video search backends failed (${VIDEO_BACKEND}: ${primary.status.error ?? primary.status.status}; ${FALLBACK_BACKEND}: ${second.status.error ?? second.status.status}).`;
    return { ok: false, failure: { code: primary.failure.code === "timeout" && second.failure.code === "timeout" ? "timeout" : "upstream_error", message, backends } };
  }
  return { ok: true, videos: second.videos, backends };
}

/** One Data API call for the found ids, cut at the deadline; null when not configured. */
async function enrich(deps: VideoSearchDeps, videos: readonly VideoItem[], deadline: number): Promise<EnrichOutcome | null> {
  const settings = deps.youtubeData;
  if (!settings?.key || videos.length === 0) return null;
  const timers = deps.timers ?? GLOBAL_TIMERS;
  const controller = new AbortController();
  let handle: unknown;
  const expired = new Promise<EnrichOutcome>((resolve) => {
    handle = timers.set(() => {
      controller.abort();
      resolve({ videos: null, status: { status: "timeout", results: 0, latency_ms: 0, error: "deadline reached" } });
    }, Math.max(0, deadline - ANSWER_RESERVE_MS - deps.clock.now()));
  });
  const io = { fetch: deps.fetch, clock: deps.clock, signal: controller.signal };
  const outcome = await Promise.race([fetchVideoDetails(io, settings, videos.map((v) => v.video_id)), expired]);
  timers.clear(handle);
  return outcome;
}

export async function videoSearch(deps: VideoSearchDeps, req: VideoSearchRequest): Promise<VideoSearchResponseBody> {
  await loadLibraries();
  const { clock } = deps;
  const start = clock.now();
  const deadline = start + (deps.deadlineMs ?? 15_000);
  const filters: VideoFilters = { minDuration: req.min_duration ?? null, maxDuration: req.max_duration ?? null, freshness: req.freshness ?? null };

  const entry = deps.registry.get(VIDEO_BACKEND);
  if (!entry || !entry.enabled) {
    const error = entry ? entry.reason : "not registered";
    const backends = { [VIDEO_BACKEND]: { status: "disabled" as const, results: 0, latency_ms: 0, error } };
    throw videoSearchError({ code: "upstream_error", message: `The video search backend is unavailable (${VIDEO_BACKEND}: ${error}).`, backends });
  }

  const collected = await collectWithFallback(deps, req, filters, start, deadline);
  if (!collected.ok) throw videoSearchError(collected.failure, clock.now());
  const videos = collected.videos;

  const wantTranscripts = req.include_transcript && req.tier !== "basic";
  const [transcripts, enriched] = await Promise.all([
    wantTranscripts
      ? fetchTranscripts(deps, entry, videos, req.language, deadline)
      : videos.map((): TranscriptResult => ({ segments: null, player: null })),
    enrich(deps, videos, deadline),
  ]);
  // YouTube's player and captions count toward its /health as its search does.
  for (const t of transcripts) if (t.upstreamFailed !== undefined) deps.runner.observe?.(VIDEO_BACKEND, !t.upstreamFailed);
  const backends: Record<string, BackendRunStatus> = { ...collected.backends };
  if (enriched) backends[DATA_API_BACKEND] = enriched.status;

  // Exact dates replace approximate ones — the Data API's first, then the player's (WEB
  // microformat); filters are rechecked on them. The Data API's view count is exact too.
  const merged = videos.map((video, i) => {
    const player = transcripts[i]!.player;
    const data = enriched?.videos?.get(video.video_id);
    const exact = data?.published_at ?? player?.publishDate ?? player?.uploadDate ?? null;
    return {
      video: {
        ...video,
        duration_seconds: data?.duration_seconds || video.duration_seconds,
        published_at: exact ?? video.published_at,
        published_approximate: exact ? false : video.published_approximate,
        view_count: data?.view_count ?? video.view_count ?? player?.viewCount ?? 0,
      },
      segments: transcripts[i]!.segments,
      transcript: transcripts[i]!,
    };
  }).filter((m) => passesFilters(m.video, filters, start));

  const digests = merged.map((m) => (m.segments ? transcriptDigest(m.segments, req.query, req.tier) : null));
  const scores = scoreVideos(
    req.query,
    merged.map((m, i) => ({
      rank: m.video.rank,
      title: m.video.title,
      description: m.video.description_snippet,
      transcriptCoverage: digests[i]?.coverage ?? null,
      publishedAt: m.video.published_at,
      viewCount: m.video.view_count,
    })),
    start,
  );

  const results: VideoResultBody[] = merged
    .map((m, i) => ({
      video_id: m.video.video_id,
      title: m.video.title,
      channel: m.video.channel,
      channel_id: m.video.channel_id,
      url: m.video.url,
      thumbnail: m.video.thumbnail,
      duration_seconds: m.video.duration_seconds ?? 0,
      view_count: m.video.view_count,
      published_at: m.video.published_at,
      score: scores[i]!,
      transcript_snippet: digests[i]?.snippet ?? null,
    }))
    .sort((a, b) => b.score - a.score);

  const tokensUsed = results.reduce((sum, r) => sum + (r.transcript_snippet ? countTokens(r.transcript_snippet) : 0), 0);
  const approximate = merged.some((m) => m.video.published_approximate);
  return {
    meta: {
      query: req.query,
      results_count: results.length,
      tokens_used: tokensUsed,
      duration_ms: Math.max(0, Math.round(clock.now() - start)),
      ...(approximate ? { approximate_dates: true } : {}),
      backends,
      ...(wantTranscripts ? { transcripts: summarizeTranscripts(merged.map((m) => ({ video_id: m.video.video_id, transcript: m.transcript }))) } : {}),
    },
    results,
  };
}
