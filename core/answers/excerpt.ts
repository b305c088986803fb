/**
 * Query-focused excerpts of a page's text: split into passages, rank them against the query
 * (BM25, core/ranking/lexical.ts), keep the best until the token budget is full, and give them
 * back in page order. Without any match, the opening of the page.
 */
import { countTokens, truncateToTokens } from "../budget/tokens.ts";
import { lexicalScores } from "../ranking/lexical.ts";

const MAX_PASSAGE_WORDS = 80;

/** Paragraphs, with long ones cut at sentence ends into passages of at most ~80 words. */
export function passages(text: string): string[] {
  const out: string[] = [];
  for (const para of text.split(/\n\s*\n/)) {
    const clean = para.replace(/\s+/g, " ").trim();
    if (!clean) continue;
    const sentences = clean.split(/(?<=[.!?])\s+(?=[A-Z0-9"“(])/);
    let current = "";
    for (const s of sentences) {
      const words = (current + " " + s).trim().split(" ").length;
      if (current && words > MAX_PASSAGE_WORDS) {
        out.push(current);
        current = s;
      } else current = (current + " " + s).trim();
    }
    if (current) out.push(current);
  }
  return out;
}

export function queryExcerpt(text: string, query: string, maxTokens: number): string {
  const parts = passages(text);
  if (parts.length === 0 || maxTokens <= 0) return "";
  const scores = lexicalScores(query, parts.map((content) => ({ title: "", content })));
  const order = parts.map((_, i) => i).filter((i) => scores[i] > 0).sort((a, b) => scores[b] - scores[a] || a - b);
  if (order.length === 0) return truncateToTokens(parts.join("\n\n"), maxTokens);
  const chosen: number[] = [];
  let used = 0;
  for (const i of order) {
    const cost = countTokens(parts[i]) + (chosen.length ? 2 : 0);
    if (used + cost <= maxTokens) {
      chosen.push(i);
      used += cost;
    } else if (chosen.length === 0) {
      return truncateToTokens(parts[i], maxTokens);
    }
  }
  chosen.sort((a, b) => a - b);
  const joined = chosen.map((i) => parts[i]).join(" … ");
  return countTokens(joined) <= maxTokens ? joined : truncateToTokens(joined, maxTokens);
}

/** Longest chunk, in tokens: a chunk is a passage (≤ ~80 words), cut if one sentence runs on. */
const CHUNK_TOKENS = 160;

/**
 * Up to `n` passages of the page that match the query (BM25 > 0), best first: the chunks
 * `chunks_per_source` asks for. A page with no matching passage gives none.
 */
export function queryChunks(text: string, query: string, n: number): string[] {
  const parts = passages(text);
  if (parts.length === 0 || n <= 0) return [];
  const scores = lexicalScores(query, parts.map((content) => ({ title: "", content })));
  return parts
    .map((_, i) => i)
    .filter((i) => scores[i] > 0)
    .sort((a, b) => scores[b] - scores[a] || a - b)
    .slice(0, n)
    .map((i) => truncateToTokens(parts[i], CHUNK_TOKENS));
}
