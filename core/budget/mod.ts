/** Token budgets and transcript excerpts (api.md §5), counted in o200k_base. */
export { countTokens, truncateToTokens } from "./tokens.ts";
export { formatTimestamp } from "./timestamps.ts";
export { buildWindows, DEFAULT_WINDOW_MS } from "./transcript-windows.ts";
export type { TimedText, TranscriptWindow } from "./transcript-windows.ts";
export { rankWindows } from "./window-ranking.ts";
export type { WindowRanking } from "./window-ranking.ts";
export { excerptForTier, fullTranscript, TIER_TOKEN_BUDGET, transcriptDigest, transcriptExcerpt } from "./transcript-excerpt.ts";
export type { ExcerptOptions, Tier, TranscriptDigest } from "./transcript-excerpt.ts";
