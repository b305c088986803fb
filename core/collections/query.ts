/**
 * A query's search terms: its words, lower-cased, once each, without English stop words (analyze.ts).
 * The stores stem them with the same stemmer that indexed the passages.
 */
import { STOP_WORDS, words as wordsOf } from "./analyze.ts";

const MAX_TERMS = 32;

export function queryTerms(query: string): string[] {
  const kept = wordsOf(query).filter((w) => !STOP_WORDS.has(w));
  // Stop words are not indexed (analyze.ts), so a query made only of them ("the who") finds nothing.
  return [...new Set(kept)].slice(0, MAX_TERMS);
}
