/**
 * A query's search terms: its words, lower-cased, once each, without English stop words (the
 * `stopword` package's list). Both stores stem the terms themselves (SQLite's porter tokenizer,
 * PostgreSQL's english configuration), so the same words reach both.
 */
import { eng } from "stopword";

const STOP = new Set(eng);
const MAX_TERMS = 32;

export function queryTerms(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const kept = words.filter((w) => !STOP.has(w));
  // A query made only of stop words ("the who") is searched with them rather than with nothing.
  return [...new Set(kept.length ? kept : words)].slice(0, MAX_TERMS);
}
