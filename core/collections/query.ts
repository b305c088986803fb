/**
 * A query's search terms: its words, lower-cased, once each, without English stop words (analyze.ts).
 * The stores stem them with the same stemmer that indexed the passages.
 */
import { STOP_WORDS, words as wordsOf } from "./analyze.ts";

const MAX_TERMS = 32;

export function queryTerms(query: string): string[] {
  const words = wordsOf(query);
  const kept = words.filter((w) => !STOP_WORDS.has(w));
  // A query made only of stop words ("the who") is searched with them rather than with nothing.
  return [...new Set(kept.length ? kept : words)].slice(0, MAX_TERMS);
}
