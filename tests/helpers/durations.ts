/**
 * Rewrites tests/durations.json (the order files start in: helpers/sequencer.ts) from the seconds
 * vitest recorded for each file in its cache (node_modules/.vite/vitest/…/results.json: the whole
 * file, its hooks included). Run it after a whole `npm test` on the machine the order is for, with
 * the cache removed before that run, so every figure comes from the same run:
 * `rm -rf node_modules/.vite/vitest && npm test && npx tsx tests/helpers/durations.ts`.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DURATIONS } from "./sequencer.ts";

const cacheDir = new URL("../../node_modules/.vite/vitest/", import.meta.url).pathname;
const rows: Array<[string, number]> = [];
for (const dir of readdirSync(cacheDir)) {
  const cache = JSON.parse(readFileSync(join(cacheDir, dir, "results.json"), "utf8")) as { results: Array<[string, { duration: number }]> };
  for (const [key, { duration }] of cache.results) rows.push([key.slice(key.indexOf(":") + 1), Math.round(duration / 100) / 10]);
}
rows.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
const note = "Seconds per test file (hooks included) in one whole run on the 2-core machine (tests/README.md); only their order matters: tests/helpers/sequencer.ts starts the longest first.";
writeFileSync(DURATIONS, JSON.stringify({ note, seconds: Object.fromEntries(rows) }, null, 1) + "\n");
console.log(`${rows.length} files written to ${DURATIONS}`);
