/**
 * Builds the extraction-multilingual data set from trafilatura's public evaluation data
 * (https://github.com/adbar/trafilatura, Apache-2.0): of the entries of its tests/evaldata.json, the
 * 617 whose page is named in multilingual-pages.txt (all in its tests/eval/), in its order, with
 * their `with` and `without` segments unchanged; each page gzipped as it is. See bench/README.md.
 *
 *   git clone --depth 1 https://github.com/adbar/trafilatura /tmp/trafilatura
 *   npx tsx bench/extraction/get-multilingual.ts /tmp/trafilatura [--out DIR]
 *
 * DIR defaults to $QUARRY_BENCH_DATA/extraction-multilingual; it must not hold a set already.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { benchDataDir } from "../data.ts";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: "string" } } });
const checkout = positionals[0];
if (!checkout) {
  console.error("usage: npx tsx bench/extraction/get-multilingual.ts TRAFILATURA_CHECKOUT [--out DIR]");
  process.exit(2);
}
const out = values.out ?? join(benchDataDir(), "extraction-multilingual");
if (existsSync(join(out, "evaldata.json"))) {
  console.error(`${out} already holds a set (evaldata.json); remove it or give --out`);
  process.exit(1);
}

const wanted = readFileSync(new URL("./multilingual-pages.txt", import.meta.url), "utf8").split("\n").filter(Boolean);
const upstream = JSON.parse(readFileSync(join(checkout, "tests", "evaldata.json"), "utf8")) as Record<string, { file: string; with: string[]; without: string[] }>;
const byFile = new Map(Object.entries(upstream).map(([url, e]) => [e.file, url]));
const missing = wanted.filter((f) => !byFile.has(f) || !existsSync(join(checkout, "tests", "eval", f)));
if (missing.length) {
  console.error(`${missing.length} of the ${wanted.length} pages are not in ${checkout}/tests (evaldata.json and eval/): ${missing.slice(0, 5).join(", ")}…`);
  process.exit(1);
}

const keep = new Set(wanted);
const set: Record<string, { file: string; with: string[]; without: string[] }> = {};
mkdirSync(join(out, "html"), { recursive: true });
for (const [url, e] of Object.entries(upstream)) {
  if (!keep.has(e.file)) continue;
  set[url] = { file: `${e.file}.gz`, with: e.with, without: e.without };
  writeFileSync(join(out, "html", `${e.file}.gz`), gzipSync(readFileSync(join(checkout, "tests", "eval", e.file))));
}
writeFileSync(join(out, "evaldata.json"), JSON.stringify(set, null, 2) + "\n");
console.log(`${Object.keys(set).length} pages written to ${out}`);
