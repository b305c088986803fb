/**
 * Development aid: both sets scored once (no timing), then the worst pages of one set with what
 * went wrong, so the wins and regressions of a change can be inspected page by page.
 * Usage: npx tsx bench/extraction/per-page.ts [--multilingual] [--baseline] [--limit N] [--json out.json]
 *  - articles (default): per-page shingle precision/recall, worst first;
 *  - --multilingual: pages with missed (`-`) or leaked (`+`) segments, most errors first.
 * --json writes per-page results for diffing two runs. Held-out pages of the multilingual set
 * (multilingual.ts, `split`) are only counted, never listed, unless --all.
 */
import { writeFileSync } from "node:fs";
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { extractContent } from "../../core/extract/mod.ts";
import { loadLibraries } from "../../core/lazy.ts";
import { loadPages } from "./dataset.ts";
import { pageCounts, pagePrecision, pageRecall, score } from "./metric.ts";
import { loadSegmentPages } from "./multilingual.ts";
import { segmentCounts, segmentScore } from "./segment-metric.ts";

// HTML parsing loads on first need in the service; the benchmark needs it before it starts.
await loadLibraries();

const args = process.argv.slice(2);
const useBaseline = args.includes("--baseline");
const showMulti = args.includes("--multilingual");
const limitAt = args.indexOf("--limit");
const limit = limitAt >= 0 ? Number(args[limitAt + 1]) : 40;
const jsonAt = args.indexOf("--json");

function extract(html: string, url: string): string {
  try {
    if (!useBaseline) return extractContent(html, url, { onlyMainContent: true, formats: ["text"] }).text;
    const { document } = parseHTML(html);
    return new Readability(document as unknown as Document).parse()?.textContent ?? "";
  } catch (e) {
    console.error(url, e);
    return "";
  }
}

const articles = loadPages().map((p) => {
  const predicted = extract(p.html, p.url);
  const c = pageCounts(p.truth, predicted);
  return { id: p.id, url: p.url, truth: p.truth, p: pagePrecision(c), r: pageRecall(c), predicted };
});
const multi = loadSegmentPages().map((p) => ({ id: p.id, url: p.url, lang: p.language, split: p.split, ...segmentCounts(extract(p.html, p.url), p.with, p.without) }));
const listed = args.includes("--all") ? multi : multi.filter((r) => r.split === "dev");

if (showMulti) {
  const bad = listed.filter((r) => r.fn + r.fp > 0).sort((a, b) => b.fn + b.fp - (a.fn + a.fp));
  for (const r of bad.slice(0, limit)) {
    console.log(`${r.id} [${r.lang}] ${r.url}`);
    for (const s of r.missed) console.log(`   - ${s.slice(0, 110)}`);
    for (const s of r.leaked) console.log(`   + ${s.slice(0, 110)}`);
  }
} else {
  const rows = [...articles].sort((a, b) => Math.min(a.p, a.r) - Math.min(b.p, b.r));
  for (const r of rows.slice(0, limit)) console.log(`${r.p.toFixed(3)} ${r.r.toFixed(3)} ${r.id.slice(0, 8)} ${r.url}`);
}
const a = score(articles);
const m = segmentScore(multi);
console.log(`articles F1 ${a.f1.toFixed(4)} P ${a.precision.toFixed(4)} R ${a.recall.toFixed(4)}`);
console.log(`multilingual F ${m.f.toFixed(4)} P ${m.precision.toFixed(4)} R ${m.recall.toFixed(4)} (tp ${m.tp}, fn ${m.fn}, fp ${m.fp})`);
for (const split of ["dev", "heldout"] as const) {
  const s = segmentScore(multi.filter((r) => r.split === split));
  console.log(`  ${split} F ${s.f.toFixed(4)} P ${s.precision.toFixed(4)} R ${s.recall.toFixed(4)} (tp ${s.tp}, fn ${s.fn}, fp ${s.fp})`);
}
if (jsonAt >= 0) {
  writeFileSync(
    args[jsonAt + 1]!,
    JSON.stringify({
      articles: articles.map(({ id, p, r }) => ({ id, p, r })),
      multilingual: listed.map(({ id, missed, leaked }) => ({ id, missed, leaked })),
    }),
  );
}
