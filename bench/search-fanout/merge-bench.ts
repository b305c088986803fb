/**
 * The merge/rank hot path of POST /v1/search: mergeResults on 4 engines × 20 results,
 * against a naive baseline (concatenate, exact-URL dedup, sort by rank) measured in the
 * same run, plus the two stages that dominate it.
 *   npx tsx bench/search-fanout/merge-bench.ts [iterations]
 */
import type { RawResult } from "../../core/backends/types.ts";
import { lexicalScores } from "../../core/ranking/lexical.ts";
import { mergeResults, type PerBackendResults } from "../../core/ranking/merge.ts";
import { dedupKey } from "../../core/ranking/normalize-url.ts";
import { rng } from "../../tests/helpers/rng.ts";

const ENGINES = ["searxng", "duckduckgo", "wikipedia", "brave"];
const PER_ENGINE = 20;
const QUERY = "how to cancel a tokio task in async rust";
const ITERATIONS = Number(process.argv[2] ?? 5_000);


const WORDS = ("tokio task cancel abort handle async rust future select drop runtime spawn join error " +
  "the a of to and in is for with on how you can this that it guide docs example thread blocking").split(" ");

/** 4 engines drawing from one pool of 45 pages, so about half the results overlap, in varied spellings. */
function makeInput(seed: number): PerBackendResults {
  const random = rng(seed);
  const sentence = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(" ");
  const pool = Array.from({ length: 45 }, (_, i) => ({
    path: `https://site${i % 17}.example.com/articles/${i}/${sentence(3).replaceAll(" ", "-")}`,
    title: sentence(8),
    content: sentence(35),
  }));
  const spell = (url: string) => {
    const variants = [url, url.replace("https://", "http://"), url.replace("://", "://www."), `${url}/`, `${url}?utm_source=x&ref=y`, `${url}#top`];
    return variants[Math.floor(random() * variants.length)]!;
  };
  const input: Record<string, RawResult[]> = {};
  for (const engine of ENGINES) {
    const picked = [...pool].sort(() => random() - 0.5).slice(0, PER_ENGINE);
    input[engine] = picked.map((page, i) => ({
      title: page.title,
      url: spell(page.path),
      content: page.content,
      published_at: random() < 0.3 ? new Date(Date.UTC(2026, 0, 1 + Math.floor(random() * 300))).toISOString() : null,
      rank: i + 1,
    }));
  }
  return input;
}

/** What a fan-out without ranking would do. */
function naiveMerge(perBackend: PerBackendResults): RawResult[] {
  const seen = new Map<string, RawResult>();
  for (const list of Object.values(perBackend)) {
    for (const result of list) if (!seen.has(result.url)) seen.set(result.url, result);
  }
  return [...seen.values()].sort((a, b) => a.rank - b.rank);
}

const inputs = Array.from({ length: 64 }, (_, i) => makeInput(i + 1));
const docsOf = (input: PerBackendResults) => Object.values(input).flat();
const allDocs = inputs.map(docsOf);
let sink = 0;

const cases: { name: string; fn: (i: number) => void }[] = [
  { name: "baseline: concat + exact dedup + sort", fn: (i) => (sink += naiveMerge(inputs[i % inputs.length]!).length) },
  { name: "mergeResults (full)", fn: (i) => (sink += mergeResults(inputs[i % inputs.length]!, QUERY, { maxResults: 20 }).length) },
  { name: "  stage: dedupKey × 80", fn: (i) => { for (const d of allDocs[i % allDocs.length]!) sink += dedupKey(d.url).length; } },
  { name: "  stage: lexicalScores × 80 docs", fn: (i) => (sink += lexicalScores(QUERY, allDocs[i % allDocs.length]!).length) },
];

function measure(fn: (i: number) => void): { mean: number; p50: number; p95: number } {
  for (let i = 0; i < Math.min(1_000, ITERATIONS); i++) fn(i); // warm-up (JIT)
  const samples = new Float64Array(ITERATIONS);
  for (let i = 0; i < ITERATIONS; i++) {
    const t0 = performance.now();
    fn(i);
    samples[i] = performance.now() - t0;
  }
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { mean: mean * 1000, p50: sorted[Math.floor(sorted.length * 0.5)]! * 1000, p95: sorted[Math.floor(sorted.length * 0.95)]! * 1000 };
}

const rows = cases.map(({ name, fn }) => ({ name, ...measure(fn) }));
// Ratios use medians: this machine is shared and noisy, so means and p95 swing between runs.
const base = rows[0]!.p50;
const pad = (s: string, n: number) => s.padEnd(n);
const num = (x: number) => x.toFixed(1).padStart(9);
console.log(`merge/rank hot path: ${ENGINES.length} engines × ${PER_ENGINE} results, ${ITERATIONS} iterations, Node ${process.version}`);
console.log(`${pad("case", 40)}${"mean µs".padStart(9)}${"p50 µs".padStart(9)}${"p95 µs".padStart(9)}${"×base p50".padStart(10)}`);
for (const r of rows) console.log(`${pad(r.name, 40)}${num(r.mean)}${num(r.p50)}${num(r.p95)}${(r.p50 / base).toFixed(1).padStart(10)}`);
const merged = mergeResults(inputs[0]!, QUERY, {});
console.log(`sample: ${docsOf(inputs[0]!).length} raw results → ${merged.length} merged, ${naiveMerge(inputs[0]!).length} after exact-URL dedup (checksum ${sink % 997})`);
