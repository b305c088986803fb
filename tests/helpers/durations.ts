/**
 * Rewrites tests/durations.json (the order files start in: helpers/sequencer.ts) from vitest's JSON
 * report of a whole run: `npx vitest run --reporter=json --outputFile.json=R.json`, then
 * `npx tsx tests/helpers/durations.ts R.json`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { DURATIONS } from "./sequencer.ts";

const report = process.argv[2];
if (!report) {
  console.error("usage: npx tsx tests/helpers/durations.ts VITEST_REPORT.json");
  process.exit(2);
}
const r = JSON.parse(readFileSync(report, "utf8")) as { testResults: Array<{ name: string; startTime: number; endTime: number }> };
const root = new URL("../..", import.meta.url).pathname;
const rows = r.testResults
  .map((f) => [relative(root, f.name).split("\\").join("/"), Math.round((f.endTime - f.startTime) / 100) / 10] as const)
  .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
const note = "Seconds per test file in one whole run on the 2-core machine (tests/README.md); only their order matters: tests/helpers/sequencer.ts starts the longest first.";
writeFileSync(DURATIONS, JSON.stringify({ note, seconds: Object.fromEntries(rows) }, null, 1) + "\n");
console.log(`${rows.length} files written to ${DURATIONS}`);
