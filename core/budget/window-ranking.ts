/**
 * Ranks transcript windows against a query: BM25 over the windows of one transcript
 * (Robertson & Zaragoza 2009; k1 = 1.2, b = 0.75), with two additions that matter for short
 * spoken windows: a coverage factor (a window naming more of the distinct query terms beats
 * one repeating a single term) and a bonus for query terms spoken next to each other in the
 * query's order (phrases). One pass over each window's text without allocating (the cost
 * that dominates is scanning, not scoring).
 */
import { queryTerms, tokenize } from "../ranking/lexical.ts";
import type { TranscriptWindow } from "./transcript-windows.ts";

const K1 = 1.2;
const B = 0.75;
const PHRASE_WEIGHT = 0.5;

interface WindowStats {
  tf: Float64Array;
  length: number;
  phrases: number;
}

function hashOf(word: string): number {
  let h = 0;
  for (let i = 0; i < word.length; i++) h = (Math.imul(h, 31) + word.charCodeAt(i)) | 0;
  return h;
}

/** True when `text[from, from + term.length)` equals `term`, ASCII letters compared case-insensitively. */
function sameWord(text: string, from: number, term: string): boolean {
  for (let i = 0; i < term.length; i++) {
    let c = text.charCodeAt(from + i);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== term.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Counts query terms in a window. ASCII text (all of the ASR output seen) is scanned once
 * with a rolling hash per word and no allocation: a word is only compared with a term whose
 * hash it shares, as itself or without a plural `s` (the stemming of ranking/lexical.ts).
 */
function scanner(terms: readonly string[]) {
  const index = new Map(terms.map((t, i) => [t, i]));
  const n = terms.length;
  const hashes = Int32Array.from(terms, hashOf);
  const lengths = Int32Array.from(terms, (t) => t.length);
  // Bit L set: some term is L characters long, or L - 1 (its plural). Most words fail this test.
  let lengthMask = 0;
  for (const t of terms) if (t.length < 30) lengthMask |= (1 << t.length) | (1 << (t.length + 1));

  /** Index of the term the word [start, end) is (or is the plural of), or -1. */
  const termAt = (text: string, start: number, end: number, h: number, hBeforeLast: number): number => {
    const len = end - start;
    for (let k = 0; k < n; k++) if (hashes[k] === h && lengths[k] === len && sameWord(text, start, terms[k]!)) return k;
    if (len > 3 && text.charCodeAt(end - 1) === 115 && text.charCodeAt(end - 2) !== 115) {
      for (let k = 0; k < n; k++) if (hashes[k] === hBeforeLast && lengths[k] === len - 1 && sameWord(text, start, terms[k]!)) return k;
    }
    return -1;
  };

  return (text: string): WindowStats => {
    const tf = new Float64Array(n);
    let words = 0;
    let phrases = 0;
    let prevTerm = -2;
    let prevWord = -2;
    const slow = (): WindowStats => {
      words = 0;
      phrases = 0;
      prevTerm = prevWord = -2;
      tf.fill(0);
      for (const token of tokenize(text)) {
        const term = index.get(token);
        if (term !== undefined) {
          tf[term]!++;
          if (prevWord === words - 1 && prevTerm === term - 1) phrases++;
          prevTerm = term;
          prevWord = words;
        }
        words++;
      }
      return { tf, length: words, phrases };
    };
    let start = -1;
    let h = 0;
    let hBeforeLast = 0;
    const end = text.length;
    for (let p = 0; p <= end; p++) {
      let c = p < end ? text.charCodeAt(p) : 32;
      if (c > 127) return slow(); // accents and other scripts: the Unicode tokenizer
      if (c >= 65 && c <= 90) c += 32;
      if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
        if (start < 0) {
          start = p;
          h = 0;
        }
        hBeforeLast = h;
        h = (Math.imul(h, 31) + c) | 0;
      } else if (start >= 0) {
        const len = p - start;
        if (len < 31 && (lengthMask >>> len) & 1) {
          const term = termAt(text, start, p, h, hBeforeLast);
          if (term >= 0) {
            tf[term]!++;
            if (prevWord === words - 1 && prevTerm === term - 1) phrases++;
            prevTerm = term;
            prevWord = words;
          }
        }
        words++;
        start = -1;
      }
    }
    return { tf, length: words, phrases };
  };
}

export interface WindowRanking {
  /** One score ≥ 0 per window, in window order; 0 means no query term occurs in it. */
  scores: Float64Array;
  /** Share of the query's distinct terms spoken anywhere in the transcript (for result scoring). */
  coverage: number;
}

/** Scores every window; all zeros when the query has no usable terms. */
export function rankWindows(windows: readonly TranscriptWindow[], query: string): WindowRanking {
  const scores = new Float64Array(windows.length);
  const terms = queryTerms(query);
  if (terms.length === 0 || windows.length === 0) return { scores, coverage: 0 };
  const scan = scanner(terms);
  const stats = windows.map((w) => scan(w.text));
  const n = windows.length;
  const avgLength = stats.reduce((sum, s) => sum + s.length, 0) / n || 1;
  let spoken = 0;
  const idf = terms.map((_, i) => {
    let df = 0;
    for (const s of stats) if (s.tf[i]! > 0) df++;
    if (df > 0) spoken++;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  });
  const meanIdf = idf.reduce((a, b) => a + b, 0) / terms.length;

  for (let w = 0; w < n; w++) {
    const { tf, length, phrases } = stats[w]!;
    const norm = K1 * (1 - B + (B * length) / avgLength);
    let bm25 = 0;
    let distinct = 0;
    for (let i = 0; i < terms.length; i++) {
      const f = tf[i]!;
      if (f === 0) continue;
      distinct++;
      bm25 += (idf[i]! * f * (K1 + 1)) / (f + norm);
    }
    if (distinct === 0) continue;
    const coverage = distinct / terms.length;
    scores[w] = bm25 * (1 + coverage) + PHRASE_WEIGHT * meanIdf * Math.min(phrases, 3);
  }
  return { scores, coverage: spoken / terms.length };
}
