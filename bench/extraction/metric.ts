/**
 * The article-extraction benchmark's metric, exactly as described in
 * bench/README.md (the same one the published figures use):
 * 4-token shingles compared as multisets, per-page tp/fp/fn normalised, precision and recall
 * averaged over pages separately, F1 taken from the two means.
 */

const WORD_RUN = /[\p{L}\p{N}\p{M}_]+/gu;

/** Maximal runs of Unicode word characters, case kept. */
export function tokenize(text: string): string[] {
  return text.match(WORD_RUN) ?? [];
}

/** Multiset of 4-token shingles; fewer than 4 tokens give one shingle of them all, none give none. */
export function shingles(text: string, size = 4): Map<string, number> {
  const tokens = tokenize(text);
  const counts = new Map<string, number>();
  if (tokens.length === 0) return counts;
  if (tokens.length < size) {
    counts.set(tokens.join(" "), 1);
    return counts;
  }
  for (let i = 0; i + size <= tokens.length; i++) {
    // A separator that cannot occur inside a token keeps distinct token runs distinct.
    const key = tokens.slice(i, i + size).join(" ");
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export interface PageCounts {
  /** Normalised so that tp + fp + fn = 1 (all 0 when both texts are empty). */
  tp: number;
  fp: number;
  fn: number;
}

export function pageCounts(truth: string, predicted: string): PageCounts {
  const t = shingles(truth);
  const p = shingles(predicted);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const [key, pc] of p) {
    const tc = t.get(key) ?? 0;
    tp += Math.min(tc, pc);
    fp += Math.max(0, pc - tc);
  }
  for (const [key, tc] of t) {
    fn += Math.max(0, tc - (p.get(key) ?? 0));
  }
  const sum = tp + fp + fn;
  if (sum === 0) return { tp: 0, fp: 0, fn: 0 };
  return { tp: tp / sum, fp: fp / sum, fn: fn / sum };
}

/** Per-page precision; 1 when there is nothing wrong (fp = fn = 0). */
export function pagePrecision(c: PageCounts): number {
  if (c.fp === 0 && c.fn === 0) return 1;
  return c.tp + c.fp > 0 ? c.tp / (c.tp + c.fp) : 0;
}

export function pageRecall(c: PageCounts): number {
  if (c.fp === 0 && c.fn === 0) return 1;
  return c.tp + c.fn > 0 ? c.tp / (c.tp + c.fn) : 0;
}

export interface Score {
  f1: number;
  precision: number;
  recall: number;
  pages: number;
}

/**
 * Scores predictions against the truth. `null`/`undefined` predictions (failures) count as empty
 * texts, never as skipped pages.
 */
export function score(pairs: Array<{ truth: string; predicted: string | null | undefined }>): Score {
  let pSum = 0;
  let pN = 0;
  let rSum = 0;
  let rN = 0;
  for (const { truth, predicted } of pairs) {
    const c = pageCounts(truth, predicted ?? "");
    if (c.tp + c.fp > 0) {
      pSum += pagePrecision(c);
      pN++;
    }
    if (c.tp + c.fn > 0) {
      rSum += pageRecall(c);
      rN++;
    }
  }
  const precision = pN > 0 ? pSum / pN : 0;
  const recall = rN > 0 ? rSum / rN : 0;
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { f1, precision, recall, pages: pairs.length };
}
