/**
 * bench/retrieval/variants.ts: ranking choices measured on Cranfield in memory, to choose the collections'
 * ranking on principle and see what each choice is worth (not a product path: run.ts measures the stores).
 * Documents are scored whole (Cranfield's abstracts are one passage each), with the terms of
 * core/collections/analyze.ts unless a variant says otherwise. Metrics as in run.ts.
 *
 *   npx tsx bench/retrieval/variants.ts
 */
import { stemmer } from "stemmer";
import { STOP_WORDS, words } from "../../core/collections/analyze.ts";
import { corpus, judged, metrics as cranfieldMetrics } from "./cranfield.ts";

/** The three metrics, as the table prints them. */
function metrics(ranked: Map<string, string[]>): string[] {
  const m = cranfieldMetrics(ranked);
  return [m.ndcg, m.recall, m.map].map((x) => x.toFixed(3));
}

interface Variant {
  stop: boolean;
  stem: boolean;
  k1: number;
  b: number;
  /** Title weight in BM25F; the text is the abstract without its leading title unless titleInText. */
  title: number;
  titleInText: boolean;
  /** Sum of one BM25 per field (title, text), each with its own length normalisation, instead of BM25F. */
  perField: boolean;
  idf: "lucene" | "classic";
  /** Weight of adjacent query-term pairs found adjacent in the document (0: off). */
  bigrams: number;
  /** RM3 pseudo-relevance feedback: terms from the top documents, mixed with the query (0: off). */
  rm3: { terms: number; docs: number; original: number } | null;
}
const base: Variant = { stop: true, stem: true, k1: 1.2, b: 0.75, title: 3, titleInText: false, perField: false, idf: "lucene", bigrams: 0, rm3: null };

function evaluate(v: Variant) {
  const analyze = (s: string) => words(s).filter((w) => !v.stop || !STOP_WORDS.has(w)).map((w) => (v.stem ? stemmer(w) : w));
  const counts = (terms: string[], weight: number, into = new Map<string, number>()) => {
    for (const t of terms) into.set(t, (into.get(t) ?? 0) + weight);
    if (v.bigrams) for (let i = 0; i + 1 < terms.length; i++) into.set(`${terms[i]} ${terms[i + 1]}`, (into.get(`${terms[i]} ${terms[i + 1]}`) ?? 0) + weight);
    return into;
  };
  const docs = corpus.map((d) => {
    const t = analyze(d.title);
    const body = analyze(v.titleInText || !d.text.startsWith(d.title) ? d.text : d.text.slice(d.title.length));
    return { id: d._id, f: counts(body, 1, counts(t, v.title)), len: v.title * t.length + body.length, tf: counts(t, 1), bf: counts(body, 1), tl: t.length, bl: body.length };
  });
  const n = docs.length;
  const avg = docs.reduce((s, d) => s + d.len, 0) / n, avgT = docs.reduce((s, d) => s + d.tl, 0) / n, avgB = docs.reduce((s, d) => s + d.bl, 0) / n;
  const df = new Map<string, number>();
  for (const d of docs) for (const t of new Set([...d.f.keys()])) df.set(t, (df.get(t) ?? 0) + 1);
  const idf = (t: string) => {
    const m = df.get(t) ?? 0;
    return v.idf === "lucene" ? Math.log(1 + (n - m + 0.5) / (m + 0.5)) : Math.max(1e-6, Math.log((n - m + 0.5) / (m + 0.5)));
  };
  const sat = (f: number, len: number, av: number) => (f * (v.k1 + 1)) / (f + v.k1 * (1 - v.b + (v.b * len) / av));
  const score = (q: Map<string, number>) =>
    docs
      .map((d) => {
        let s = 0;
        for (const [t, w] of q) {
          if (!d.f.has(t)) continue;
          const i = idf(t);
          if (v.perField) s += w * i * ((d.tf.get(t) ? v.title * sat(d.tf.get(t)!, d.tl, avgT) : 0) + (d.bf.get(t) ? sat(d.bf.get(t)!, d.bl, avgB) : 0));
          else s += w * i * sat(d.f.get(t)!, d.len, avg);
        }
        return { d, s };
      })
      .filter((x) => x.s > 0)
      .sort((a, b) => b.s - a.s);
  const ranked = new Map<string, string[]>();
  for (const q of judged) {
    const terms = [...new Set(analyze(q.text))];
    const query = new Map(terms.map((t) => [t, 1]));
    if (v.bigrams) for (let i = 0; i + 1 < terms.length; i++) query.set(`${terms[i]} ${terms[i + 1]}`, v.bigrams);
    let hits = score(query);
    if (v.rm3) {
      const { terms: k, docs: top, original } = v.rm3;
      const weights = new Map<string, number>();
      for (const { d, s } of hits.slice(0, top)) {
        const total = [...d.f].filter(([t]) => !t.includes(" ")).reduce((a, [, f]) => a + f, 0);
        for (const [t, f] of d.f) if (!t.includes(" ")) weights.set(t, (weights.get(t) ?? 0) + (f / total) * s);
      }
      const best = [...weights].sort((a, b) => b[1] - a[1]).slice(0, k);
      const z = best.reduce((a, [, w]) => a + w, 0);
      const mixed = new Map([...query].map(([t, w]) => [t, t.includes(" ") ? w : original * w]));
      for (const [t, w] of best) mixed.set(t, (mixed.get(t) ?? 0) + (1 - original) * (w / z) * terms.length);
      hits = score(mixed);
    }
    ranked.set(q._id, hits.slice(0, 100).map((h) => h.d.id));
  }
  return metrics(ranked);
}

const variants: [string, Partial<Variant>][] = [
  ["the stores' ranking: BM25F title 3, k1 1.2, b 0.75, Lucene idf, Porter, stop words out", {}],
  ["classic idf (FTS5's bm25)", { idf: "classic" }],
  ["no stemming", { stem: false }],
  ["stop words kept", { stop: false }],
  ["k1 0.9, b 0.4 (Anserini's defaults)", { k1: 0.9, b: 0.4 }],
  ["k1 2.0, b 0.75", { k1: 2 }],
  ["k1 1.2, b 0.3", { b: 0.3 }],
  ["title weight 1 (one field)", { title: 1 }],
  ["title weight 2", { title: 2 }],
  ["title weight 5", { title: 5 }],
  ["title also left in the text (as Cranfield gives it)", { titleInText: true }],
  ["one BM25 per field, summed (lunr's way), title 1", { perField: true, title: 1 }],
  ["one BM25 per field, summed, title 1, title left in the text", { perField: true, title: 1, titleInText: true }],
  ["adjacent query-word pairs, weight 0.2", { bigrams: 0.2 }],
  ["RM3 feedback: 20 terms of the top 10, query weight 0.5", { rm3: { terms: 20, docs: 10, original: 0.5 } }],
  ["RM3 and pairs 0.2", { rm3: { terms: 20, docs: 10, original: 0.5 }, bigrams: 0.2 }],
];
console.log("| variant | nDCG@10 | Recall@100 | MAP@100 |\n|---|---:|---:|---:|");
for (const [label, v] of variants) console.log(`| ${label} | ${evaluate({ ...base, ...v }).join(" | ")} |`);
