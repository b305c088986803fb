/** The `youtube` video backend: InnerTube search, player and caption parsing (all pure). */
export { youtube, parseSearchPage } from "./search.ts";
export type { VideoItem, YoutubeQuery, YoutubeSearchPage } from "./search.ts";
export { buildPlayerRequest, buildSearchRequest, clientLocale, durationBucket, searchParams } from "./innertube.ts";
export type { DurationBucket, SearchFilters, SearchRequestInput } from "./innertube.ts";
export { parsePlayerResponse, parsePlayerValue } from "./player.ts";
export type { CaptionTrack, Playability, PlayerInfo, PlayerOutcome } from "./player.ts";
export { captionUrl, chooseCaptionTrack, needsPoToken, rebase } from "./caption-tracks.ts";
export type { CaptionChoice } from "./caption-tracks.ts";
export { parseCaptions, parseJson3, parseTimedTextXml, segmentsText } from "./caption-formats.ts";
export type { CaptionSegment } from "./caption-formats.ts";
export { isCaptchaPage, isConsentPage, youtubeFailure } from "./blocks.ts";
export { isoSeconds, parseDuration, parseViewCount, relativeDateToIso } from "./values.ts";
export { invidious, parseInvidiousSearch } from "./invidious.ts";
export { buildVideosRequest, DATA_API_BASE, DATA_API_MAX_IDS, parseIsoDuration, parseVideosResponse } from "./data-api.ts";
export type { DataApiOutcome, DataApiVideo } from "./data-api.ts";
