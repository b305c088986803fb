/**
 * Extraction through the worker pool gives exactly what in-process extraction gives: every page
 * of both extraction sets ($QUARRY_BENCH_DATA), through a Node worker thread and in process, compared field by
 * field (title, metadata, html, text, markdown, links).
 *   npx tsx bench/footprint/same-results.ts
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { gunzipSync } from "node:zlib";
import { ExtractPool } from "../../adapters/extract/pool.ts";
import { nodeSpawner } from "../../adapters/extract/spawn.ts";
import { inProcessExtractor } from "../../core/extract/run.ts";
import { benchDataDir, benchSet } from "../data.ts";

const sets = (["article-extraction", "extraction-multilingual"] as const).map((name) => join(benchSet(name), "html"));
const pool = new ExtractPool({ size: 1, idleMs: 10_000, maxHeapBytes: 96 * 2 ** 20, spawn: await nodeSpawner(512) });
let same = 0;
let total = 0;
const differ: string[] = [];
for (const dir of sets) {
  for (const f of readdirSync(dir).filter((n) => n.endsWith(".html.gz") || n.endsWith(".html"))) {
    const raw = readFileSync(join(dir, f));
    const body = f.endsWith(".gz") ? gunzipSync(raw) : raw;
    for (const onlyMainContent of [true, false]) {
      const req = { body: new Uint8Array(body), contentType: "text/html", url: `https://site.example/${f}`, onlyMainContent };
      total++;
      if (isDeepStrictEqual(await pool.extract(req), await inProcessExtractor.extract(req))) same++;
      else differ.push(`${dir}/${f} (onlyMainContent ${onlyMainContent})`);
    }
  }
}
const s = pool.stats();
await pool.close();
console.log(`${same} of ${total} extractions identical (${sets.map((d) => d.replace(benchDataDir() + "/", "")).join(", ")}; main content and whole page); workers started ${s.started}, recycled for heap ${s.recycled}, crashed ${s.crashed}`);
for (const d of differ) console.log("differs:", d);
