/**
 * Token budgets (api.md §5, o200k_base) and query-focused excerpts of a source's text: the
 * run of sentences around the one that best matches the query, cut to the budget.
 */
import { countTokens, decodeTokens, encodeTokens } from "../../budget/tokens.ts";
import { queryTerms, tokenize } from "../../ranking/lexical.ts";
import type { Tier } from "../../schema/fields.ts";

/** Tokens of text per source at each tier (basic: metadata only). */
export const TIER_TOKENS: Record<Tier, number> = { basic: 0, summary: 200, detailed: 800, full: 4_000 };

export const tokenCount = countTokens;

/** Sentences of plain text: lines, then sentence ends followed by a capital or quote. */
export function sentences(text: string): string[] {
  return text
    .split("\n")
    .flatMap((line) => line.split(/(?<=[.!?…])\s+(?=["'“(\[]?[A-Z0-9])/))
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The first `max` tokens of `text`, with an ellipsis when cut. */
export function truncateTokens(text: string, max: number): string {
  if (max <= 0) return "";
  const tokens = encodeTokens(text);
  if (tokens.length <= max) return text;
  if (max === 1) return decodeTokens(tokens.slice(0, 1)); // no room for the ellipsis
  return `${decodeTokens(tokens.slice(0, max - 1)).trimEnd()}…`;
}

function hits(sentence: string, terms: ReadonlySet<string>): number {
  let n = 0;
  for (const word of tokenize(sentence)) if (terms.has(word)) n++;
  return n;
}

export interface Excerpt {
  text: string;
  tokens: number;
}

/**
 * At most `maxTokens` tokens of `text`. Whole when it fits; with `focus`, starts at the
 * sentence with the most query words and goes on (then back) while the budget lasts;
 * without, from the start (tier full: the text as written).
 */
export function excerpt(text: string, query: string, maxTokens: number, focus = true): Excerpt {
  if (!text || maxTokens <= 0) return { text: "", tokens: 0 };
  const whole = tokenCount(text);
  if (whole <= maxTokens) return { text, tokens: whole };

  const parts = sentences(text);
  let start = 0;
  if (focus) {
    const terms = new Set(queryTerms(query));
    let best = 0;
    parts.forEach((s, i) => {
      const h = hits(s, terms);
      if (h > best) [best, start] = [h, i];
    });
  }
  const cost = parts.map(tokenCount);
  const chosen: number[] = [];
  let used = 0;
  for (let i = start; i < parts.length && used + cost[i]! + 1 <= maxTokens; i++) {
    chosen.push(i);
    used += cost[i]! + 1;
  }
  for (let i = start - 1; i >= 0 && used + cost[i]! + 1 <= maxTokens; i--) {
    chosen.unshift(i);
    used += cost[i]! + 1;
  }
  const joined = chosen.length ? chosen.map((i) => parts[i]).join(" ") : parts[start] ?? text;
  // Joining and the ellipsis can merge tokens differently: the final count decides.
  let budget = maxTokens;
  let out = truncateTokens(joined, budget);
  let tokens = tokenCount(out);
  while (tokens > maxTokens && budget > 1) {
    out = truncateTokens(joined, --budget);
    tokens = tokenCount(out);
  }
  return { text: out, tokens };
}
