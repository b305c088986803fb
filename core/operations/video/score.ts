/**
 * Relevance score of a video result in [0, 1] (api.md §6): platform rank, lexical match of
 * title and description (BM25 over the candidates, ranking/lexical.ts), how much of the
 * query the transcript covers, recency and popularity. The platform's own rank carries the
 * most weight: YouTube's ranking uses signals we do not see (watch time, engagement).
 */
import { lexicalScores } from "../../ranking/lexical.ts";

export interface ScoreInput {
  /** 1-based position across the pages fetched. */
  rank: number;
  title: string;
  description: string;
  /** Share of the query's terms spoken in the transcript, or null when there is none. */
  transcriptCoverage: number | null;
  publishedAt: string | null;
  viewCount: number;
}

export const SCORE_WEIGHTS = { rank: 0.45, lexical: 0.25, transcript: 0.1, recency: 0.1, popularity: 0.1 } as const;

const DAY_MS = 86_400_000;

/** 1 at rank 1, halving by rank 11. */
export function rankComponent(rank: number): number {
  return 1 / (1 + 0.1 * Math.max(0, rank - 1));
}

/** 1 today, about 0.37 after a year, 0 when the date is unknown. */
export function recencyComponent(publishedAt: string | null, now: number): number {
  const at = publishedAt ? Date.parse(publishedAt) : NaN;
  if (Number.isNaN(at)) return 0;
  return Math.exp(-Math.max(0, now - at) / (365 * DAY_MS));
}

/** log10 of views over 9: a billion views is 1. */
export function popularityComponent(views: number): number {
  return Math.min(1, Math.log10(Math.max(0, views) + 1) / 9);
}

/**
 * Scores in input order. When no candidate has a transcript (tier basic, transcripts off)
 * the transcript weight goes to the lexical match so scores still span [0, 1].
 */
export function scoreVideos(query: string, items: readonly ScoreInput[], now: number): number[] {
  const lexical = lexicalScores(query, items.map((i) => ({ title: i.title, content: i.description })));
  const anyTranscript = items.some((i) => i.transcriptCoverage !== null);
  const w = anyTranscript ? SCORE_WEIGHTS : { ...SCORE_WEIGHTS, lexical: SCORE_WEIGHTS.lexical + SCORE_WEIGHTS.transcript, transcript: 0 };
  return items.map((item, k) => {
    const score =
      w.rank * rankComponent(item.rank) +
      w.lexical * lexical[k]! +
      w.transcript * (item.transcriptCoverage ?? 0) +
      w.recency * recencyComponent(item.publishedAt, now) +
      w.popularity * popularityComponent(item.viewCount);
    return Math.round(Math.min(1, Math.max(0, score)) * 10_000) / 10_000;
  });
}
