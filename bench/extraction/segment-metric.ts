/**
 * The multilingual set's metric, trafilatura's own (bench/README.md):
 * whitespace-collapsed substring tests of hand-picked segments. Every `with` segment found in the
 * text is a true positive, every one missing a false negative; every `without` segment found is a
 * false positive. Counts are summed over all pages before precision and recall (micro-average).
 */

/** Collapses runs of whitespace (no-break spaces included, as Python's `\s` does) and trims. */
export function collapse(text: string): string {
  return text.replace(/\s+/gu, " ").trim();
}

export interface SegmentCounts {
  tp: number;
  fn: number;
  fp: number;
  /** The segments behind fn and fp, for looking at errors. */
  missed: string[];
  leaked: string[];
}

/** `predicted` null/undefined (a failure) counts as empty text. */
export function segmentCounts(predicted: string | null | undefined, withSegs: string[], withoutSegs: string[]): SegmentCounts {
  const text = collapse(predicted ?? "");
  const out: SegmentCounts = { tp: 0, fn: 0, fp: 0, missed: [], leaked: [] };
  for (const seg of withSegs) {
    const s = collapse(seg);
    if (!s) continue; // an empty segment says nothing (and would be "found" in any text)
    if (text.includes(s)) out.tp++;
    else {
      out.fn++;
      out.missed.push(s);
    }
  }
  for (const seg of withoutSegs) {
    const s = collapse(seg);
    if (!s) continue;
    if (text.includes(s)) {
      out.fp++;
      out.leaked.push(s);
    }
  }
  return out;
}

export interface SegmentScore {
  f: number;
  precision: number;
  recall: number;
  tp: number;
  fn: number;
  fp: number;
  pages: number;
}

/** Micro-averaged precision, recall and F-score from summed counts. */
export function segmentScore(pages: Array<Pick<SegmentCounts, "tp" | "fn" | "fp">>): SegmentScore {
  let tp = 0;
  let fn = 0;
  let fp = 0;
  for (const c of pages) {
    tp += c.tp;
    fn += c.fn;
    fp += c.fp;
  }
  const precision = tp + fp > 0 ? tp / (tp + fp) : 0;
  const recall = tp + fn > 0 ? tp / (tp + fn) : 0;
  const f = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { f, precision, recall, tp, fn, fp, pages: pages.length };
}
