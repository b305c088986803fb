/**
 * How collections read text, the same on every store: words (runs of letters and digits) lower-cased,
 * English stop words left out (the `stopword` package's list), each word reduced to its stem by the
 * Porter stemmer (the `stemmer` package). The stores index and search these terms, and rank passages
 * with BM25F from the statistics they keep per collection, so SQLite and PostgreSQL rank alike.
 */
import { stemmer } from "stemmer";
import { eng } from "stopword";

export const STOP_WORDS: ReadonlySet<string> = new Set(eng);

/**
 * An English possessive ending: `'s` (or with the typographic ’ or the full-width ＇) closing a word. It is
 * taken off before the text is cut into words, as Lucene's English analyser does (EnglishPossessiveFilter):
 * otherwise "Apple’s" would give the words "apple" and "s", and "s" — in two thirds of the passages of
 * English news — would be a query term whose postings are read whole for nothing. "Apple’s" and "Apple"
 * now give the same term; an index made before holds "s" postings that no query asks for any more.
 */
const POSSESSIVE = /(?<=[\p{L}\p{N}])['\u2019\uFF07]s(?![\p{L}\p{N}])/gu;

/** Lower-cased words of a text, in order (no stop words taken out), possessive endings off. */
export const words = (text: string): string[] => text.toLowerCase().replace(POSSESSIVE, "").match(/[\p{L}\p{N}]+/gu) ?? [];

/** A word's term: its Porter stem ("shipped" and "shipping" → "ship"); long tokens are cut, not indexed whole. */
export const stem = (word: string): string => stemmer(word.length > 64 ? word.slice(0, 64) : word);

/** A text's terms in order: its words less stop words, stemmed. */
export const analyze = (text: string): string[] => words(text).filter((w) => !STOP_WORDS.has(w)).map(stem);

/**
 * BM25F: a term's count in a passage weighs the title and heading above the text (a word in the title says
 * more about the passage than one in its text), the passage's length is weighed the same way, and the
 * weighted count saturates with k1 and is normalised by length with b. k1 1.2 and b 0.75 are the values of
 * Robertson's experiments and of most systems' defaults (Lucene's BM25Similarity, Elasticsearch, Terrier);
 * they were not tuned on the benchmark. The inverse document frequency is Lucene's, ln(1 + (N − n + 0.5) /
 * (n + 0.5)), which stays positive for a term in more than half of the passages (the classic form goes
 * negative there, and small collections have many such terms).
 */
export const BM25 = { k1: 1.2, b: 0.75, weights: { title: 3, heading: 2, body: 1 } } as const;

export function idf(passages: number, df: number): number {
  return Math.log(1 + (passages - df + 0.5) / (df + 0.5));
}

/** A passage as the stores index it: its terms per field, its weighted length, its distinct terms. */
export interface AnalyzedPassage {
  title: string[];
  heading: string[];
  body: string[];
  /** Σ field weight × the field's terms. */
  length: number;
  distinct: string[];
}

export function analyzePassage(title: string | null, heading: string | null, body: string): AnalyzedPassage {
  const t = analyze(title ?? ""), h = analyze(heading ?? ""), b = analyze(body);
  const w = BM25.weights;
  return { title: t, heading: h, body: b, length: w.title * t.length + w.heading * h.length + w.body * b.length, distinct: [...new Set([...t, ...h, ...b])] };
}
