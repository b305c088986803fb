/**
 * Rendering benchmark: POST /v1/scrape of the same real article pages (the shared
 * article-extraction set, served on 127.0.0.2) statically and rendered in Chromium, 4 at a time,
 * in the same run: pages per second, p50/p95 latency, extraction F1 of each path, and peak RSS of
 * Quarry plus its browser processes while 4 pages render in parallel (target: under 800 MB).
 *
 *   npx tsx bench/render/run.ts [--pages 40] [--parallel 4]
 *
 * Compiled, as `quarry serve` runs from dist/ (no tsx and its esbuild service in the process):
 *
 *   npx esbuild bench/render/run.ts --bundle --platform=node --format=esm --packages=external \
 *     --target=node20 --outfile=dist/bench/render.mjs && node dist/bench/render.mjs
 *
 * Memory is also broken down by kind of process at the peak (Quarry, Chromium's browser,
 * renderers, GPU, utility, zygotes).
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { createQuarry } from "../../core/app.ts";
import { parseConfig } from "../../core/config.ts";
import { createKey, ensureAccount } from "../../core/keys/service.ts";
import { createBrowserPool } from "../../adapters/browser/pool.ts";
import { findChromium } from "../../adapters/browser/pool.ts";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { memoryPorts } from "../../adapters/shared/bootstrap.ts";
import { loadPages } from "../extraction/dataset.ts";
import { score } from "../extraction/metric.ts";

const { values } = parseArgs({ options: { pages: { type: "string", default: "40" }, parallel: { type: "string", default: "4" } } });
const PAGES = Number(values.pages);
const PARALLEL = Number(values.parallel);
const HOST = "127.0.0.2";

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Memory of this process and every process below it (Chromium's browser, GPU and renderers), MB:
 * proportional set size, so libraries the processes share are counted once, not once each; with
 * the share of each kind of process. Sampled by a separate process: reading /proc/<pid>/smaps_rollup
 * takes about 4 ms a process, and in Quarry's own event loop (where the browser's egress proxy
 * runs) sampling the whole machine every 200 ms stalled the renders it was measuring. The sampler
 * walks only Quarry's process tree, and leaves itself out.
 */
const SAMPLER = `
const { readFileSync, readdirSync } = require("node:fs");
const root = Number(process.argv[1]);
function kindOf(pid) {
  if (pid === root) return "quarry";
  try {
    // Chromium rewrites its helpers' titles, so the arguments may be one string: match, not split.
    const cmd = readFileSync("/proc/" + pid + "/cmdline", "utf8").replaceAll("\\0", " ");
    const type = /--type=([\\w-]+)/.exec(cmd)?.[1];
    if (type === "renderer") return "renderers";
    if (type === "zygote") return "zygotes";
    return type ?? (/crashpad/.test(cmd) ? "crashpad" : /chrom/i.test(cmd) ? "browser" : "other (" + cmd.slice(0, 40) + ")");
  } catch { return "gone"; }
}
function children(pid) {
  const out = [];
  try {
    for (const t of readdirSync("/proc/" + pid + "/task")) {
      for (const c of readFileSync("/proc/" + pid + "/task/" + t + "/children", "utf8").split(" ")) if (c.trim()) out.push(Number(c));
    }
  } catch {}
  return out;
}
setInterval(() => {
  const byKind = {};
  let total = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop();
    if (pid === process.pid) continue;
    let kb = 0;
    try { kb = Number(/^Pss:\\s+(\\d+)/m.exec(readFileSync("/proc/" + pid + "/smaps_rollup", "utf8"))?.[1] ?? 0); } catch {}
    const kind = kindOf(pid);
    byKind[kind] = (byKind[kind] ?? 0) + kb / 1024;
    total += kb / 1024;
    stack.push(...children(pid));
  }
  process.stdout.write(JSON.stringify({ total, byKind }) + "\\n");
}, 250);
`;

interface Sample {
  total: number;
  byKind: Record<string, number>;
}
let latest: Sample = { total: 0, byKind: {} };
const sampler = spawn(process.execPath, ["-e", SAMPLER, String(process.pid)], { stdio: ["ignore", "pipe", "inherit"] });
let pending = "";
const listeners = new Set<(s: Sample) => void>();
sampler.stdout!.on("data", (chunk: Buffer) => {
  pending += chunk.toString("utf8");
  for (let i = pending.indexOf("\n"); i >= 0; i = pending.indexOf("\n")) {
    latest = JSON.parse(pending.slice(0, i)) as Sample;
    pending = pending.slice(i + 1);
    for (const l of listeners) l(latest);
  }
});

// Only the pages served, as bytes, and the truths: the rest of the set is not kept in Quarry's process.
const pages = loadPages().slice(0, PAGES).map((p) => ({ body: Buffer.from(p.html), truth: p.truth }));
const server = createServer((req, res) => {
  const page = pages[Number((req.url ?? "").slice(1))];
  if (!page) return res.writeHead(404).end();
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page.body);
});
await new Promise<void>((r) => server.listen(0, HOST, () => r()));
const base = `http://${HOST}:${(server.address() as { port: number }).port}`;

const allow = parseAllowList([`${HOST}/32`]);
/** No internet here: the pages' own third-party scripts and images fail at once, as offline. */
const noDns = async (host: string): Promise<string[]> => {
  if (host === HOST) return [HOST];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
};
const chromium = findChromium(process.env.QUARRY_CHROMIUM_PATH ?? null);
if (!chromium) throw new Error("no Chromium found: apt-get install chromium, or set QUARRY_CHROMIUM_PATH");
const pool = createBrowserPool({ executablePath: chromium, maxPages: PARALLEL, allow, resolver: noDns, userAgent: "QuarryBot/bench", logger: silent });
const config = parseConfig({ QUARRY_IP_RATE: "off", QUARRY_PLANS: '{"free":{"quota":null,"per_minute":100000}}' }, "bench");
const ports = { ...memoryPorts(silent), pages: createSafeFetch({ allow, resolver: noDns }), render: pool };
const { app } = createQuarry(ports, config);
await ensureAccount(ports.keys, "bench", undefined, config.plans, Date.now());
const { key } = await createKey(ports.keys, { account: "bench", name: "bench", scopes: ["scrape"] }, Date.now());

interface Run {
  label: string;
  perSecond: number;
  p50: number;
  p95: number;
  f1: number;
  peakMb: number;
  selfMb: number;
  /** Each kind of process at the moment of the peak. */
  atPeak: Record<string, number>;
  failures: number;
}

async function run(label: string, render: "never" | "always"): Promise<Run> {
  const latencies: number[] = [];
  const texts: string[] = new Array(pages.length).fill("");
  let next = 0;
  let failures = 0;
  const reasons = new Map<string, number>();
  let peak = latest;
  let self = peak.byKind.quarry ?? 0;
  const onSample = (now: Sample) => {
    if (now.total > peak.total) peak = now;
    self = Math.max(self, now.byKind.quarry ?? 0);
  };
  listeners.add(onSample);
  const started = performance.now();
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    for (let i = next++; i < pages.length; i = next++) {
      const t0 = performance.now();
      const res = await app.request("/v1/scrape", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ url: `${base}/${i}`, formats: ["text"], render, timeout_ms: 30_000 }),
      });
      latencies.push(performance.now() - t0);
      if (res.status !== 200) {
        failures++;
        const why = `${res.status} ${((await res.json().catch(() => ({}))) as { error?: { code?: string } }).error?.code ?? ""}`;
        reasons.set(why, (reasons.get(why) ?? 0) + 1);
      }
      else texts[i] = (await res.json()).data.text ?? "";
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  listeners.delete(onSample);
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  const f1 = score(pages.map((p, i) => ({ truth: p.truth, predicted: texts[i] }))).f1;
  if (reasons.size) console.log(`${label}: failures ${[...reasons].map(([k, n]) => `${k} ×${n}`).join(", ")}`);
  return { label, perSecond: pages.length / seconds, p50: q(0.5), p95: q(0.95), f1, peakMb: peak.total, selfMb: self, atPeak: peak.byKind, failures };
}

// A warm-up render starts the browser, so its launch is not counted in the first page.
await app.request("/v1/scrape", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ url: `${base}/0`, formats: ["text"], render: "always" }) });
const rows = [await run("static scrape (baseline)", "never"), await run("rendered in Chromium", "always")];
console.log(`\n${pages.length} article pages, ${PARALLEL} at a time (${new Date().toISOString().slice(0, 10)})\n`);
console.log("| path | pages/s | p50 ms | p95 ms | F1 | peak memory MB (PSS, Quarry + browser) | of it Quarry's process | failures | vs static |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  console.log(`| ${r.label} | ${r.perSecond.toFixed(1)} | ${r.p50.toFixed(0)} | ${r.p95.toFixed(0)} | ${r.f1.toFixed(3)} | ${r.peakMb.toFixed(0)} | ${r.selfMb.toFixed(0)} | ${r.failures} | ${(r.perSecond / rows[0]!.perSecond).toFixed(2)} |`);
}
for (const r of rows) {
  const parts = Object.entries(r.atPeak).sort((a, b) => b[1] - a[1]).map(([k, mb]) => `${k} ${mb.toFixed(0)}`);
  console.log(`\nat the peak of "${r.label}", MB: ${parts.join(", ")}`);
}
await pool.close();
server.close();
sampler.kill();
