/** Social research: scoring, merging, budgets, the extractive report, the operation and its route. */
export { socialResearch } from "./research.ts";
export type { SocialResearchDeps, SocialResearchFailure, SocialResearchOutcome, PlatformStatus } from "./research.ts";
export { SocialResearchBody, SocialResearchResponse, parseSocialResearchBody, TIERS } from "./schema.ts";
export type { SocialResearchInput, SocialResearchAnswer, SocialSource, Tier } from "./schema.ts";
export { rankSocial } from "./rank.ts";
export type { RankOptions, RankOutcome, RankedSource, Scores } from "./rank.ts";
export { duplicateGroups, nearDuplicatePairs, linkKey, shingles } from "./dedup.ts";
export { engagementValue, percentiles, recencyScore, finalScore, blendEngagement, blendRelevance, ENGAGEMENT_CAPS } from "./score.ts";
export { excerpt, tokenCount, TIER_TOKENS } from "./excerpt.ts";
export { buildReport } from "./report.ts";
export type { SocialReport, Theme, Citation } from "./report.ts";
export { fetchTopReplies } from "./replies.ts";
export { socialRoutes } from "./route.ts";
export type { SocialRouteOptions } from "./route.ts";
