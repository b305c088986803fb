/** Merging and scoring of search results. */
export { mergeResults, matchesDomain, normalizeDomain, FRESHNESS_MS } from "./merge.ts";
export type { MergedResult, MergeOptions, PerBackendResults } from "./merge.ts";
export { normalizeUrl, dedupKey, urlIdentity, stripTracking, isTrackingParam, collectionDocUrl, isCollectionDocUrl } from "./normalize-url.ts";
export { lexicalScores, queryTerms, tokenize } from "./lexical.ts";
