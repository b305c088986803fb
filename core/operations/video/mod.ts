/** The video search operation: schema, orchestration and route. */
export { videoSearch, VIDEO_BACKEND } from "./video-search.ts";
export type { VideoSearchDeps, VideoSearchFailure, VideoSearchOutcome } from "./video-search.ts";
export { VideoSearchBody, VideoSearchResponse, VideoResult, VIDEO_TIERS, FRESHNESS_VALUES } from "./schema.ts";
export type { VideoResultBody, VideoSearchRequest, VideoSearchResponseBody } from "./schema.ts";
export { videoRoutes, videoRegistry } from "./route.ts";
export type { VideoRouteOptions } from "./route.ts";
export { scoreVideos, SCORE_WEIGHTS } from "./score.ts";
export { passesFilters } from "./filters.ts";
export type { VideoFilters } from "./filters.ts";
export { fetchTranscript } from "./transcripts.ts";
export type { TranscriptIo, TranscriptResult } from "./transcripts.ts";
