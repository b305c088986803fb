/**
 * Rendering benchmark: POST /v1/scrape of the same real article pages (the
 * article-extraction set, $QUARRY_BENCH_DATA, served on 127.0.0.2) statically and rendered in Chromium, 4 at a time,
 * in the same run: pages per second, p50/p95 latency, extraction F1 of each path, and peak memory
 * of Quarry plus its browser processes while 4 pages render in parallel (target: under 800 MB).
 *
 *   npm run build && npx tsx bench/render/run.ts [--pages 40] [--parallel 4] [--chromium /usr/bin/chromium]
 *
 * Quarry is the real server, `quarry serve` from dist/ (run by node, as in production), in its own
 * process with its default configuration (an extraction worker; QUARRY_BROWSER_PAGES = --parallel),
 * on a throwaway SQLite directory; this process only serves the pages, sends the requests and
 * measures. No internet here: the pages' third-party scripts, fonts and images fail at once.
 * Memory is broken down by kind of process at the peak (Quarry, Chromium's browser, renderers, GPU,
 * utility, zygotes).
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { findChromium } from "../../adapters/browser/pool.ts";
import { loadPages } from "../extraction/dataset.ts";
import { score } from "../extraction/metric.ts";

const { values } = parseArgs({ options: { pages: { type: "string", default: "40" }, parallel: { type: "string", default: "4" }, chromium: { type: "string" } } });
const PAGES = Number(values.pages);
const PARALLEL = Number(values.parallel);
const HOST = "127.0.0.2";

/**
 * Memory of Quarry's server process and every process below it (its extraction worker is a thread
 * of it; Chromium's browser, GPU, utility and renderer processes), MB:
 * proportional set size, so libraries the processes share are counted once, not once each; with
 * the share of each kind of process. Sampled by a separate process: reading /proc/<pid>/smaps_rollup
 * takes about 4 ms a process; done in the event loop of the process that served Quarry (where the
 * browser's egress proxy runs), sampling the whole machine every 200 ms stalled the renders it was
 * measuring. The sampler walks only Quarry's process tree.
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

const pages = loadPages().slice(0, PAGES).map((p) => ({ body: Buffer.from(p.html), truth: p.truth }));
/**
 * The script-shell version of a page (the render case of the extraction benchmark): the same
 * article, but its body arrives as JSON fetched by a script, as a single-page app delivers it. The
 * static HTML is an empty root, a <noscript> and the script; only a browser sees the article.
 */
function shellOf(html: string): { page: Buffer; json: Buffer } {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ?? "";
  const body = /<body[^>]*>([\s\S]*)<\/body>/i.exec(html)?.[1] ?? html;
  const page = `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><div id="root"></div>` +
    `<noscript>This site needs JavaScript.</noscript><script src="/shell.js"></script></body></html>`;
  return { page: Buffer.from(page), json: Buffer.from(JSON.stringify({ body })) };
}
const SHELL_JS = `fetch(location.pathname.replace("/shell/", "/json/")).then((r) => r.json()).then((d) => { document.getElementById("root").outerHTML = d.body; });`;
const shells = pages.map((p) => shellOf(p.body.toString("utf8")));

const server = createServer((req, res) => {
  const [, kind, n] = /^\/(?:(shell|json)\/)?(\d+)$/.exec(req.url ?? "") ?? [];
  const i = Number(n);
  if (req.url === "/shell.js") return res.writeHead(200, { "content-type": "text/javascript" }).end(SHELL_JS);
  if (n === undefined || !pages[i]) return res.writeHead(404).end();
  if (kind === "shell") return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(shells[i]!.page);
  if (kind === "json") return res.writeHead(200, { "content-type": "application/json" }).end(shells[i]!.json);
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(pages[i]!.body);
});
await new Promise<void>((r) => server.listen(0, HOST, () => r()));
const base = `http://${HOST}:${(server.address() as { port: number }).port}`;

const dir = mkdtempSync(join(tmpdir(), "quarry-render-bench-"));
const cli = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "cli.js");
if (!existsSync(cli)) throw new Error("dist/cli.js is missing: run npm run build first");
const env = {
  ...process.env, QUARRY_DATA_DIR: dir, QUARRY_EGRESS_ALLOW: `${HOST}/32`, QUARRY_BROWSER_PAGES: String(PARALLEL), QUARRY_IP_RATE: "off",
  QUARRY_PLANS: '{"free":{"quota":null,"per_minute":100000}}', QUARRY_LOG_LEVEL: "warn",
  // The browser Quarry finds by itself (the old headless shell first), unless --chromium names one.
  ...(values.chromium ? { QUARRY_CHROMIUM_PATH: values.chromium } : {}),
};
/** node's arguments to run dist/cli.js's `run` (what `quarry` does with a fresh build) with `args`. */
const quarryCli = (...args: string[]) => ["--input-type=module", "-e", `const { run } = await import(${JSON.stringify(pathToFileURL(cli).href)}); await run(process.argv.slice(1));`, ...args];
const created = execFileSync(process.execPath, quarryCli("keys", "create", "--account", "bench", "--scopes", "scrape", "--name", "bench", "--json"), { env, encoding: "utf8" });
const key = (JSON.parse(created) as { key: string }).key;
const free = createServer();
await new Promise<void>((r) => free.listen(0, "127.0.0.1", () => r()));
const quarryPort = (free.address() as { port: number }).port;
await new Promise<void>((r) => free.close(() => r()));
const quarry = spawn(process.execPath, quarryCli("serve", "--host", "127.0.0.1", "--port", String(quarryPort)), { env, stdio: ["ignore", "ignore", "inherit"] });
const api = `http://127.0.0.1:${quarryPort}`;
for (let i = 0; ; i++) {
  if ((await fetch(`${api}/health`).catch(() => null))?.ok) break;
  if (i > 300) throw new Error("quarry serve did not start");
  await new Promise((r) => setTimeout(r, 100));
}
const sampler = spawn(process.execPath, ["-e", SAMPLER, String(quarry.pid)], { stdio: ["ignore", "pipe", "inherit"] });
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

const scrape = (body: Record<string, unknown>) =>
  fetch(`${api}/v1/scrape`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

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
  /** Answers with meta.rendered true. */
  rendered: number;
}

async function run(label: string, render: "never" | "always" | "auto", prefix = ""): Promise<Run> {
  const latencies: number[] = [];
  const texts: string[] = new Array(pages.length).fill("");
  let next = 0;
  let failures = 0;
  const reasons = new Map<string, number>();
  let rendered = 0;
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
      const res = await scrape({ url: `${base}/${prefix}${i}`, formats: ["text"], render, timeout_ms: 30_000 });
      latencies.push(performance.now() - t0);
      if (res.status !== 200) {
        failures++;
        const why = `${res.status} ${((await res.json().catch(() => ({}))) as { error?: { code?: string } }).error?.code ?? ""}`;
        reasons.set(why, (reasons.get(why) ?? 0) + 1);
      }
      else {
        const body = (await res.json()) as { data: { text?: string }; meta: { rendered?: boolean } };
        texts[i] = body.data.text ?? "";
        if (body.meta.rendered) rendered++;
      }
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  listeners.delete(onSample);
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  const f1 = score(pages.map((p, i) => ({ truth: p.truth, predicted: texts[i] }))).f1;
  if (reasons.size) console.log(`${label}: failures ${[...reasons].map(([k, n]) => `${k} ×${n}`).join(", ")}`);
  return { label, perSecond: pages.length / seconds, p50: q(0.5), p95: q(0.95), f1, peakMb: peak.total, selfMb: self, atPeak: peak.byKind, failures, rendered };
}

// A warm-up render starts the browser, so its launch is not counted in the first page.
await scrape({ url: `${base}/0`, formats: ["text"], render: "always" });
const rows = [
  await run("static scrape (baseline)", "never"),
  await run("rendered in Chromium", "always"),
  await run("script shells, static (`render: never`)", "never", "shell/"),
  await run("script shells, `render: auto`", "auto", "shell/"),
];
const browserUsed = findChromium(values.chromium ?? null) ?? "none";
console.log(`\n${pages.length} article pages (and their script-shell versions), ${PARALLEL} at a time, browser ${browserUsed} (${new Date().toISOString().slice(0, 10)})\n`);
console.log("| path | pages/s | p50 ms | p95 ms | F1 | rendered | peak memory MB (PSS, Quarry + browser) | of it Quarry's process | failures | vs static |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  console.log(`| ${r.label} | ${r.perSecond.toFixed(1)} | ${r.p50.toFixed(0)} | ${r.p95.toFixed(0)} | ${r.f1.toFixed(3)} | ${r.rendered} | ${r.peakMb.toFixed(0)} | ${r.selfMb.toFixed(0)} | ${r.failures} | ${(r.perSecond / rows[0]!.perSecond).toFixed(2)} |`);
}
for (const r of rows) {
  const parts = Object.entries(r.atPeak).sort((a, b) => b[1] - a[1]).map(([k, mb]) => `${k} ${mb.toFixed(0)}`);
  console.log(`\nat the peak of "${r.label}", MB: ${parts.join(", ")}`);
}
sampler.kill();
quarry.kill("SIGTERM");
await new Promise((r) => quarry.once("exit", r));
server.close();
rmSync(dir, { recursive: true, force: true });
