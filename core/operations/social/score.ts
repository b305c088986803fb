/**
 * The parts of a social source's score, each in [0, 1]:
 * - relevance: BM25 match of title and text to the query over the whole batch
 *   (core/ranking/lexical.ts), blended with the platform's own rank of the item;
 * - engagement: the platform's counts on a log scale against caps typical of that platform
 *   (500 points is a lot on HN, not on Reddit), blended with the item's percentile among the
 *   same platform's items in this batch, so every platform's best can compete;
 * - recency: exponential decay whose half-life follows `freshness` (a year without one);
 * - final: relevance scaled by a quality factor of engagement and recency (finalScore).
 * All parts are monotone in what they measure, which tests/social/score.test.ts checks.
 */
import type { Freshness } from "../../backends/types.ts";
import type { Engagement, SocialPlatform } from "../../backends/social/types.ts";

type Metric = keyof Engagement;

/** Per platform: metric → [cap, weight]. A metric at its cap scores 1; weights sum to 1. */
export const ENGAGEMENT_CAPS: Record<SocialPlatform, Partial<Record<Metric, readonly [number, number]>>> = {
  hackernews: { score: [500, 0.6], comments: [300, 0.4] },
  stackexchange: { score: [100, 0.5], answers: [10, 0.2], views: [100_000, 0.3] },
  github: { comments: [100, 0.6], reactions: [100, 0.4] },
  lemmy: { score: [1_000, 0.6], comments: [300, 0.4] },
  reddit: { score: [10_000, 0.6], comments: [2_000, 0.4] },
  bluesky: { likes: [1_000, 0.5], reposts: [300, 0.3], comments: [200, 0.2] },
  mastodon: { likes: [500, 0.5], reposts: [200, 0.3], comments: [100, 0.2] },
};

const ABSOLUTE_SHARE = 0.7;

/** Engagement on the platform's own scale, in [0, 1]; negative scores count as zero. */
export function engagementValue(platform: SocialPlatform, engagement: Engagement): number {
  let value = 0;
  for (const [metric, spec] of Object.entries(ENGAGEMENT_CAPS[platform]) as [Metric, readonly [number, number]][]) {
    const x = Math.max(0, engagement[metric] ?? 0);
    value += spec[1] * Math.min(1, Math.log1p(x) / Math.log1p(spec[0]));
  }
  return Math.min(1, value);
}

/**
 * Percentile of each value among `values` (ties share the middle), in [0, 1]; a lone value is
 * 0.5. Sorting once keeps it O(n log n).
 */
export function percentiles(values: readonly number[]): number[] {
  const n = values.length;
  if (n === 1) return [0.5];
  const order = values.map((value, i) => ({ value, i })).sort((a, b) => a.value - b.value);
  const out = new Array<number>(n);
  for (let start = 0; start < n; ) {
    let end = start;
    while (end + 1 < n && order[end + 1]!.value === order[start]!.value) end++;
    const rank = (start + end) / 2 / (n - 1);
    for (let k = start; k <= end; k++) out[order[k]!.i] = rank;
    start = end + 1;
  }
  return out;
}

export function blendEngagement(absolute: number, percentile: number): number {
  return ABSOLUTE_SHARE * absolute + (1 - ABSOLUTE_SHARE) * percentile;
}

const DAY_MS = 86_400_000;
const HALF_LIFE_MS: Record<Freshness | "none", number> = {
  day: DAY_MS / 2,
  week: 3 * DAY_MS,
  month: 10 * DAY_MS,
  year: 90 * DAY_MS,
  none: 365 * DAY_MS,
};

/** Recency in [0, 1]: 1 now (or in the future), halving every half-life; 0 for an unknown date. */
export function recencyScore(publishedAt: string | null, now: number, freshness: Freshness | null): number {
  const at = publishedAt ? Date.parse(publishedAt) : NaN;
  if (Number.isNaN(at)) return 0;
  const age = Math.max(0, now - at);
  return 2 ** (-age / HALF_LIFE_MS[freshness ?? "none"]);
}

/** The platform's rank as a prior in (0, 1]: 1 for its first item, 0.5 for its eleventh. */
export function rankPrior(rank: number): number {
  return 1 / (1 + Math.max(0, rank - 1) / 10);
}

export function blendRelevance(lexical: number, rank: number): number {
  return 0.85 * lexical + 0.15 * rankPrior(rank);
}

export interface ScoreParts {
  relevance: number;
  engagement: number;
  recency: number;
}

/** How engagement and recency share the quality factor (recency counts more inside a freshness window). */
const QUALITY = { engagement: 0.6, recency: 0.4 };
const FRESH_QUALITY = { engagement: 0.4, recency: 0.6 };
/** Share of the score that relevance alone carries: quality can at most multiply it by 1 / FLOOR. */
const FLOOR = 0.4;
/** Share of the remaining headroom a source gains when other items discuss the same thing. */
const SPREAD_BONUS = 0.1;

/**
 * The final score in [0, 1]: relevance × (FLOOR + (1 − FLOOR) × quality), so a popular but
 * off-topic item cannot beat an on-topic one by engagement alone, and among equally relevant
 * items the engaged and recent win. `others` = how many other items were merged into this
 * source (the same link discussed elsewhere): up to three lift it toward 1.
 */
export function finalScore(parts: ScoreParts, freshness: Freshness | null, others = 0): number {
  const w = freshness ? FRESH_QUALITY : QUALITY;
  const quality = w.engagement * parts.engagement + w.recency * parts.recency;
  const base = clamp01(parts.relevance) * (FLOOR + (1 - FLOOR) * clamp01(quality));
  const spread = Math.min(1, others / 3);
  return clamp01(base + SPREAD_BONUS * spread * (1 - base));
}

export function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

export function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
