/**
 * The Cranfield set (BEIR layout, bench/README.md) and its metrics as the set's README defines them:
 * nDCG@10 (gain 2^grade − 1), Recall@100 and MAP@100, averaged over the queries that have judgements.
 * Shared by run.ts (the stores) and variants.ts (ranking choices in memory).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { benchSet } from "../data.ts";

const dir = benchSet("retrieval/cranfield");
const lines = (f: string) => readFileSync(join(dir, f), "utf8").split("\n").filter(Boolean);
export const corpus = lines("corpus.jsonl").map((l) => JSON.parse(l) as { _id: string; title: string; text: string });
const queries = lines("queries.jsonl").map((l) => JSON.parse(l) as { _id: string; text: string });
const qrels = new Map<string, Map<string, number>>();
for (const l of lines("qrels.tsv").slice(1)) {
  const [q, d, s] = l.split("\t");
  if (!qrels.has(q!)) qrels.set(q!, new Map());
  qrels.get(q!)!.set(d!, Number(s));
}
export const judged = queries.filter((q) => qrels.has(q._id));

/** The three metrics of a ranking: query id → document ids, best first. */
export function metrics(ranked: Map<string, string[]>): { ndcg: number; recall: number; map: number } {
  let ndcg = 0, recall = 0, map = 0;
  for (const q of judged) {
    const rel = qrels.get(q._id)!;
    const got = (ranked.get(q._id) ?? []).slice(0, 100);
    const dcg = got.slice(0, 10).reduce((s, d, i) => s + (2 ** (rel.get(d) ?? 0) - 1) / Math.log2(i + 2), 0);
    const ideal = [...rel.values()].sort((a, b) => b - a).slice(0, 10).reduce((s, g, i) => s + (2 ** g - 1) / Math.log2(i + 2), 0);
    ndcg += ideal ? dcg / ideal : 0;
    recall += got.filter((d) => rel.has(d)).length / rel.size;
    let found = 0, ap = 0;
    got.forEach((d, i) => {
      if (rel.has(d)) ap += ++found / (i + 1);
    });
    map += ap / Math.min(rel.size, 100);
  }
  const n = judged.length;
  return { ndcg: ndcg / n, recall: recall / n, map: map / n };
}
