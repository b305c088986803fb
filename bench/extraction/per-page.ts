/**
 * Development aid: per-page scores of Quarry's extractor (and optionally the baseline), worst first,
 * so regressions and wins of a change can be inspected page by page.
 * Usage: npx tsx bench/extraction/per-page.ts [--baseline] [--limit N] [--json out.json]
 */
import { writeFileSync } from "node:fs";
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { extractContent } from "../../core/extract/mod.ts";
import { loadPages } from "./dataset.ts";
import { pageCounts, pagePrecision, pageRecall, score } from "./metric.ts";
import { loadLibraries } from "../../core/lazy.ts";

await loadLibraries();

const args = process.argv.slice(2);
const useBaseline = args.includes("--baseline");
const limitAt = args.indexOf("--limit");
const limit = limitAt >= 0 ? Number(args[limitAt + 1]) : 40;
const jsonAt = args.indexOf("--json");

function baseline(html: string): string {
  const { document } = parseHTML(html);
  return new Readability(document as unknown as Document).parse()?.textContent ?? "";
}

const pages = loadPages();
const rows = pages.map((p) => {
  let predicted = "";
  try {
    predicted = useBaseline ? baseline(p.html) : extractContent(p.html, p.url).text;
  } catch (e) {
    console.error(p.id, e);
  }
  const c = pageCounts(p.truth, predicted);
  return { id: p.id, url: p.url, p: pagePrecision(c), r: pageRecall(c), predicted };
});
const s = score(pages.map((p, i) => ({ truth: p.truth, predicted: rows[i]!.predicted })));
rows.sort((a, b) => Math.min(a.p, a.r) - Math.min(b.p, b.r));
for (const r of rows.slice(0, limit)) {
  console.log(`${r.p.toFixed(3)} ${r.r.toFixed(3)} ${r.id.slice(0, 8)} ${r.url}`);
}
console.log(`F1 ${s.f1.toFixed(4)} P ${s.precision.toFixed(4)} R ${s.recall.toFixed(4)}`);
if (jsonAt >= 0) {
  writeFileSync(args[jsonAt + 1]!, JSON.stringify(rows.map(({ id, p, r }) => ({ id, p, r }))));
}
