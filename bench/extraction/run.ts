/**
 * Extraction benchmark: main-text quality and speed of Quarry's extractor against its baseline,
 * plain Mozilla Readability 0.6 on linkedom, measured in the same process on the shared
 * article-extraction set (../shared/bench/article-extraction, or $QUARRY_SHARED_DIR).
 *
 *   npx tsx bench/extraction/run.ts            # prints the table, writes RESULTS.part.md
 *   npx tsx bench/extraction/run.ts --no-write # prints only
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { availableParallelism, cpus } from "node:os";
import { dirname, join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { fileURLToPath } from "node:url";
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { extractContent } from "../../core/extract/mod.ts";
import { type BenchPage, loadPages } from "./dataset.ts";
import { score, type Score } from "./metric.ts";
import { loadLibraries } from "../../core/lazy.ts";

await loadLibraries();

interface Extractor {
  name: string;
  extract: (page: BenchPage) => string;
}

const extractors: Extractor[] = [
  {
    name: "baseline: Readability 0.6 on linkedom",
    extract: (page) => {
      const { document } = parseHTML(page.html);
      return new Readability(document).parse()?.textContent ?? "";
    },
  },
  {
    name: "quarry extractContent",
    extract: (page) => extractContent(page.html, page.url).text,
  },
];

interface Row {
  name: string;
  score: Score;
  pagesPerSecond: number;
  failures: number;
}

function runAll(extractor: Extractor, pages: BenchPage[]): { texts: string[]; failures: number; ms: number } {
  const texts: string[] = [];
  let failures = 0;
  const start = performance.now();
  for (const page of pages) {
    try {
      texts.push(extractor.extract(page));
    } catch {
      // A failure is an empty prediction, never a skipped page.
      failures++;
      texts.push("");
    }
  }
  return { texts, failures, ms: performance.now() - start };
}

/**
 * A full collection between timed rounds, so one extractor's garbage is not collected on the
 * other's clock (without it the second extractor measured here ran up to 2x slower, whichever it was).
 */
function exposeGc(): () => void {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as (() => void) | undefined;
  return typeof gc === "function" ? gc : () => {};
}

/** Warm-up, then rounds interleaved across extractors so machine noise hits all alike; best round kept. */
function measureAll(list: Extractor[], pages: BenchPage[], rounds: number): Row[] {
  const gc = exposeGc();
  for (const e of list) runAll(e, pages); // JIT, lazily built rule tables
  const best = list.map(() => Number.POSITIVE_INFINITY);
  const last: Array<{ texts: string[]; failures: number }> = [];
  for (let round = 0; round < rounds; round++) {
    list.forEach((e, i) => {
      gc();
      const r = runAll(e, pages);
      best[i] = Math.min(best[i]!, r.ms);
      last[i] = r;
    });
  }
  return list.map((e, i) => ({
    name: e.name,
    score: score(pages.map((p, j) => ({ truth: p.truth, predicted: last[i]!.texts[j] }))),
    pagesPerSecond: pages.length / (best[i]! / 1000),
    failures: last[i]!.failures,
  }));
}

const args = process.argv.slice(2);
const roundsAt = args.indexOf("--rounds");
const rounds = roundsAt >= 0 ? Math.max(1, Number(args[roundsAt + 1])) : 5;
const pages = loadPages();
console.log(`${pages.length} pages, ${rounds} timed rounds each (best kept), single thread\n`);

const rows = measureAll(extractors, pages, rounds);

const f = (x: number) => x.toFixed(3);
const table = [
  "| extractor | F1 | precision | recall | pages/s | failures |",
  "|---|---|---|---|---|---|",
  ...rows.map((r) => `| ${r.name} | ${f(r.score.f1)} | ${f(r.score.precision)} | ${f(r.score.recall)} | ${r.pagesPerSecond.toFixed(1)} | ${r.failures} |`),
].join("\n");
const ratio = rows[1]!.pagesPerSecond / rows[0]!.pagesPerSecond;
console.log(table);
console.log(`\nspeed ratio quarry / baseline: ${ratio.toFixed(2)}×`);

if (!args.includes("--no-write")) {
  let nproc = String(availableParallelism());
  try {
    nproc = execFileSync("nproc", { encoding: "utf8" }).trim();
  } catch {
    // nproc is a coreutils binary; availableParallelism is the same figure where it is missing.
  }
  const date = new Date().toISOString().slice(0, 10);
  const md = [
    "## Extraction (HTML → main text)",
    "",
    `Shared article-extraction set (${pages.length} pages, metric of its README: 4-token shingles,`,
    "macro-averaged precision and recall, F1 of the means). Both extractors run in the same process, single",
    `thread, after a warm-up, rounds interleaved with a full GC before each; pages/s is the best of ${rounds}
rounds over all pages (parsing included).`,
    "",
    table,
    "",
    `Speed ratio quarry / baseline: ${ratio.toFixed(2)}×. Published on the same data: trafilatura 2.0 0.958,`,
    "go_trafilatura 0.960, rs_trafilatura 0.970.",
    "",
    "Command: `npx tsx bench/extraction/run.ts`",
    "",
    `Date: ${date}. Machine: nproc ${nproc}, ${cpus()[0]?.model ?? "unknown CPU"}, Node ${process.version}.`,
    "",
  ].join("\n");
  const out = join(dirname(fileURLToPath(import.meta.url)), "RESULTS.part.md");
  writeFileSync(out, md);
  console.log(`\nwrote ${out}`);
}
