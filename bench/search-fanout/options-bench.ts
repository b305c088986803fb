/**
 * What search's page-reading options (api.md §8) add per page, against the page read every tier
 * above basic already does (decode, extract, query excerpt), measured in the same run on the five
 * real impeachment articles of the extraction benchmark; and the extractive answer over them.
 *   npx tsx bench/search-fanout/options-bench.ts [iterations]
 */
import { loadLibraries } from "../../core/lazy.ts";
import { decodeHtml } from "../../core/extract/decode-html.ts";
import { extractContent } from "../../core/extract/extract-content.ts";
import { extractiveAnswer } from "../../core/operations/search/answer.ts";
import { queryChunks, queryExcerpt } from "../../core/answers/excerpt.ts";
import { pageMedia } from "../../core/operations/search/page-media.ts";
import { impeachmentIds, QUESTION } from "../../tests/research/fixtures.ts";
import { article } from "../../tests/helpers/articles.ts";

const ITERATIONS = Number(process.argv[2] ?? 40);

await loadLibraries();
const pages = impeachmentIds().map((id, i) => ({ url: `https://news${i}.example.com/a`, body: new TextEncoder().encode(article(id).html) }));

function time(fn: () => void): number[] {
  const out: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const t0 = performance.now();
    fn();
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}
const p50 = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;

const read = (p: (typeof pages)[number]) => {
  const html = decodeHtml(p.body, "text/html; charset=utf-8");
  const content = extractContent(html, p.url, { onlyMainContent: true });
  queryExcerpt(content.text, QUESTION, 200);
  return { html, content };
};
const extracted = pages.map(read);

const rows: [string, number[]][] = [
  ["baseline: decode + extract + 200-token excerpt (tier summary's read)", time(() => pages.forEach(read))],
  ["+ chunks_per_source: 3 (queryChunks)", time(() => extracted.forEach((e) => queryChunks(e.content.text, QUESTION, 3)))],
  ["+ include_images / include_favicon (pageMedia: head and content parsed)", time(() => extracted.forEach((e, i) => pageMedia(e.html, e.content.html, pages[i]!.url)))],
  ["+ include_raw_content (markdown is already rendered by extract)", time(() => extracted.forEach((e) => e.content.markdown.length))],
  ["include_answer, extractive, over the 5 pages' text", time(() => extractiveAnswer(QUESTION, extracted.map((e, i) => ({ title: "", url: pages[i]!.url, text: e.content.text })), "basic"))],
];
const base = p50(rows[0]![1]);
console.log(`${pages.length} pages per run, ${ITERATIONS} runs; p50 per run (all ${pages.length} pages)\n`);
console.log("| step | p50 ms | vs baseline |\n|---|---:|---:|");
for (const [name, xs] of rows) console.log(`| ${name} | ${p50(xs).toFixed(1)} | ${(p50(xs) / base).toFixed(2)}× |`);
