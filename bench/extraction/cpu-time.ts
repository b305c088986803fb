/**
 * Extraction speed work on a loaded machine: CPU time (process.cpuUsage, which other processes'
 * load disturbs less than wall time) of the scrape text path against Readability on linkedom in the
 * same process (see below how it is summed); and every output field of every page saved or
 * compared, since a speed change must not change any output.
 *
 *   npx tsx bench/extraction/cpu-time.ts articles 3                    # CPU time, 3 rounds
 *   npx tsx bench/extraction/cpu-time.ts multilingual 0 --save a.json  # outputs only (all formats)
 *   npx tsx bench/extraction/cpu-time.ts multilingual 0 --compare a.json
 */
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { extractContent } from "../../core/extract/mod.ts";
import { loadLibraries } from "../../core/lazy.ts";
import { loadPages } from "./dataset.ts";
import { loadSegmentPages } from "./multilingual.ts";

await loadLibraries();
const [set = "articles", roundsArg = "3", ...rest] = process.argv.slice(2);
const option = (name: string) => (rest.includes(name) ? rest[rest.indexOf(name) + 1] : undefined);
const rounds = Number(roundsArg);
const pages = set === "articles" ? loadPages() : loadSegmentPages();

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Every field, all formats: what a speed change must leave as it was. */
function outputs(): string[] {
  return pages.map((p) => {
    try {
      return JSON.stringify(extractContent(p.html, p.url, { onlyMainContent: true }));
    } catch (e) {
      return `threw: ${String(e)}`;
    }
  });
}

const save = option("--save");
const compare = option("--compare");
if (save || compare) {
  const got = outputs();
  if (save) writeFileSync(save, JSON.stringify(got));
  if (compare) {
    const before = JSON.parse(readFileSync(compare, "utf8")) as string[];
    const differ = got.flatMap((o, i) => (o === before[i] ? [] : [pages[i]!.id]));
    console.log(`${set}: ${pages.length} pages, ${differ.length} with a different output${differ.length ? `: ${differ.slice(0, 10).join(", ")}` : ""}`);
    if (differ.length || before.length !== got.length) process.exitCode = 1;
  }
}

/**
 * Each page's least CPU time over the rounds, the two extractors taking turns page by page, summed
 * over the set: a burst of other processes' load slows a few pages of one round, which the minimum
 * drops, where the best whole round still carries it (on this machine round totals swung ±15 %).
 */
if (rounds > 0) {
  const extractors: Array<(p: (typeof pages)[number]) => unknown> = [
    (p) => extractContent(p.html, p.url, { onlyMainContent: true, formats: ["text"] }),
    (p) => new Readability(parseHTML(p.html).document).parse(),
  ];
  const least = extractors.map(() => pages.map(() => Number.POSITIVE_INFINITY));
  const run = (i: number, j: number) => {
    const t = cpu();
    try {
      extractors[i]!(pages[j]!);
    } catch {
      // a failure is timed like any page (run.ts counts it as an empty text)
    }
    least[i]![j] = Math.min(least[i]![j]!, cpu() - t);
  };
  pages.forEach((_, j) => extractors.forEach((_, i) => run(i, j))); // warm-up, lazily built tables
  least.forEach((l) => l.fill(Number.POSITIVE_INFINITY));
  const loads: number[] = [];
  for (let r = 0; r < rounds; r++) {
    gc();
    pages.forEach((_, j) => {
      for (let k = 0; k < extractors.length; k++) run((k + r + j) % extractors.length, j);
    });
    loads.push(loadavg()[0]!);
  }
  const [q, b] = least.map((l) => l.reduce((a, x) => a + x, 0)) as [number, number];
  const rate = (ms: number) => (pages.length / (ms / 1000)).toFixed(1);
  console.log(
    `${set}: scrape text path ${q.toFixed(0)} ms CPU (${rate(q)} pages per CPU second), Readability ${b.toFixed(0)} ms (${rate(b)}), ` +
      `speed ratio ${(b / q).toFixed(3)}; load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
  );
}
