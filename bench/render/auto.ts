/**
 * How well `render: "auto"` decides, on the page kinds of bench/render/corpus.ts: for each page,
 * whether it was rendered against whether it should have been, whether the answer holds the main
 * text, and the time of the request. Quarry is the real server (`bin/quarry.js serve`, in its own
 * process) on a throwaway SQLite directory; this process serves the pages and asks.
 *
 * `--corpus blind` measures bench/render/corpus-blind.ts instead: page kinds written without reading
 * the rule, modelled on real sites, with their expectations fixed before the first run.
 *
 *   npx tsx bench/render/auto.ts [--chromium /usr/bin/chromium] [--rounds 3] [--corpus main|blind]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { findChromium } from "../../adapters/browser/pool.ts";
import { createKeyCli, startServer } from "../../tests/helpers/server.ts";
import { BLIND_CORPUS, BLIND_ROUTES } from "./corpus-blind.ts";
import { CORPUS, scrapeCorpus, startCorpusSite, type CorpusResult } from "./corpus.ts";

const { values } = parseArgs({ options: { chromium: { type: "string" }, rounds: { type: "string", default: "3" }, corpus: { type: "string", default: "main" } } });
if (values.corpus !== "main" && values.corpus !== "blind") throw new Error("--corpus is main or blind");
const blind = values.corpus === "blind";
const corpus = blind ? BLIND_CORPUS : CORPUS;
const chromium = findChromium(values.chromium ?? null);
if (!chromium) throw new Error("no Chromium found: pass --chromium PATH");
const site = await startCorpusSite(undefined, blind ? BLIND_ROUTES : undefined);
const dir = mkdtempSync(join(tmpdir(), "quarry-render-auto-"));
const env = { QUARRY_DATA_DIR: dir, QUARRY_EGRESS_ALLOW: "127.0.0.2/32", QUARRY_IP_RATE: "off", QUARRY_CHROMIUM_PATH: chromium, QUARRY_PLANS: '{"free":{"quota":null,"per_minute":100000}}' };
const { key } = createKeyCli(env, "bench", "scrape");
const server = await startServer("node", env);
try {
  // Warm-up: the browser's launch is not any page's cost.
  await scrapeCorpus(server.url, key, site.url, "?warm-up", corpus);
  const rounds: CorpusResult[][] = [];
  for (let i = 0; i < Number(values.rounds); i++) rounds.push(await scrapeCorpus(server.url, key, site.url, `?round=${i}`, corpus));
  const last = rounds.at(-1)!;
  console.log(`\n${corpus.length} page kinds (${blind ? "bench/render/corpus-blind.ts" : "bench/render/corpus.ts"}), render: "auto", one at a time, ${rounds.length} rounds (median ms), browser ${chromium} (${new Date().toISOString().slice(0, 10)})\n`);
  console.log("| page kind | should render | rendered | decision | main text | median ms |");
  console.log("|---|:-:|:-:|:-:|:-:|---:|");
  for (const [i, r] of last.entries()) {
    const times = rounds.map((round) => round[i]!.ms).sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)]!;
    console.log(`| ${r.page.kind} (\`${r.page.path}\`) | ${r.page.render ? "yes" : "no"} | ${r.rendered ? "yes" : "no"} | ${r.rendered === r.page.render ? "right" : "**wrong**"} | ${r.status === 200 && r.textOk ? "yes" : "**no**"} | ${median.toFixed(0)} |`);
  }
  const all = rounds.flat();
  const right = all.filter((r) => r.rendered === r.page.render).length;
  const text = all.filter((r) => r.status === 200 && r.textOk).length;
  const median = (rs: CorpusResult[]) => { const t = rs.map((r) => r.ms).sort((a, b) => a - b); return t.length ? t[Math.floor(t.length / 2)]! : 0; };
  console.log(`\ndecisions right: ${right}/${all.length} (${((100 * right) / all.length).toFixed(0)} %); main text found: ${text}/${all.length}; ` +
    `median ms, static answers ${median(all.filter((r) => !r.rendered)).toFixed(0)}, rendered answers ${median(all.filter((r) => r.rendered)).toFixed(0)}`);
} finally {
  await server.stop();
  await site.close();
  rmSync(dir, { recursive: true, force: true });
}
