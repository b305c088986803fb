/** How each tier (api.md §5) scales research: queries, pages, passages and report length. */
import type { Tier } from "../../schema/fields.ts";

export interface TierPlan {
  /** Sub-queries searched besides the question itself. */
  subQueries: number;
  /** Whether pages are read at all (basic works from the engines' snippets). */
  readPages: boolean;
  /** Tokens of the query-focused excerpt shown per source. */
  excerptTokens: number;
  /** Ranked passages kept as evidence, and at most this many per hostname. */
  passages: number;
  perHost: number;
  /** Findings in the report and sentences in its summary. */
  findings: number;
  summarySentences: number;
  /** The whole operation's deadline. */
  deadlineMs: number;
}

export const TIER_PLAN: Record<Tier, TierPlan> = {
  basic: { subQueries: 1, readPages: false, excerptTokens: 200, passages: 10, perHost: 2, findings: 3, summarySentences: 2, deadlineMs: 8_000 },
  summary: { subQueries: 2, readPages: true, excerptTokens: 200, passages: 16, perHost: 3, findings: 5, summarySentences: 3, deadlineMs: 15_000 },
  detailed: { subQueries: 3, readPages: true, excerptTokens: 800, passages: 30, perHost: 5, findings: 8, summarySentences: 5, deadlineMs: 20_000 },
  full: { subQueries: 4, readPages: true, excerptTokens: 4000, passages: 48, perHost: 8, findings: 12, summarySentences: 7, deadlineMs: 25_000 },
};
