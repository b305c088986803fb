/**
 * bench/crawl: pages per second of a durable Quarry crawl (POST /v1/crawl on embedded SQLite:
 * every page claimed, recorded and counted in the store) against a plain breadth-first loop of
 * fetch + extract over the same 2,000-page local site, in the same run, with the same page
 * fetcher, the same extraction (scrape's), the same concurrency, and the per-host politeness
 * limit switched off for both (QUARRY_CRAWL_HOST_CONCURRENCY=0; the site sends no Crawl-delay).
 * The site runs in its own process, and every run in a fresh process of its own, whose RSS is
 * sampled every 200 ms: the memory figures are the crawler's alone. Rounds alternate the order;
 * the ratio is taken per round (baseline and Quarry back to back) and its median reported,
 * because this shared machine's speed drifts from one minute to the next. CPU seconds per
 * 1,000 pages (the whole process: every thread, the extraction worker's included, from the
 * first request to the job's end) move much less with the machine's load than wall time does;
 * the main thread's share is read from /proc where there is one, with the rest split into V8's
 * platform threads (GC, background compilation) and the threads a process starts later (Quarry's
 * extraction worker; from the sources, tsx's loader thread too), and the site process's own CPU
 * during each run.
 *
 *   npx tsx bench/crawl/run.ts [--pages 2000] [--rounds 3] [--concurrency 8] [--only baseline|quarry|quarry-warm] [--set QUARRY_X=value ...]
 *
 * Compiled, as `quarry serve` runs from dist/ (no tsx in any process; the extraction worker is
 * dist/extract-worker.js): both sides run the same compiled code.
 *
 *   npm run build && npx esbuild bench/crawl/run.ts --bundle --platform=node --format=esm --packages=external \
 *     --target=node20 --outfile=dist/bench/crawl.mjs && node dist/bench/crawl.mjs --rounds 3
 *
 * `--set` changes Quarry's configuration for the run (e.g. `--set QUARRY_EXTRACT_WORKERS=0`);
 * without it Quarry runs as `quarry serve` would, apart from the settings above. `--only` runs
 * one side alone (its CPU per 1,000 pages, for before/after comparisons). Quarry's time runs from
 * the POST to the moment its end reached a client following the job's SSE events stream (GET
 * /v1/crawl/{id}/events, opened right after the POST): what a client sees. The job's own
 * `finished_at`, the end as a status poll every 500 ms saw it, and the gap between finished_at
 * and the SSE end are printed too.
 */
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createServer } from "node:http";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createQuarry } from "../../core/app.ts";
import { parseConfig } from "../../core/config.ts";
import { createKey, ensureAccount } from "../../core/keys/service.ts";
import { readFileSync } from "node:fs";
import { loadExtractLibraries } from "../../core/lazy.ts";
import { decodeHtml } from "../../core/extract/decode-html.ts";
import { pageLinks } from "../../core/jobs/site-files.ts";
import { frontierKey } from "../../core/jobs/url-rules.ts";
import { contentOf, kindOf } from "../../core/pages/read-page.ts";
import type { Logger } from "../../core/ports.ts";
import { buildPorts } from "../../adapters/shared/bootstrap.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const PAGES = arg("pages", 2000);
const ROUNDS = arg("rounds", 3);
const CONCURRENCY = arg("concurrency", 8);
/** `--only quarry` or `--only baseline`: one variant (for profiling). */
const ONLY = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : null;
/** `--set KEY=VALUE` (repeatable): Quarry configuration for the run. */
const SETS = process.argv.flatMap((a, i) => (a === "--set" && process.argv[i + 1] ? [process.argv[i + 1]!] : []));
const SET_ENV = Object.fromEntries(SETS.map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));

const WORDS = "quarry crawl page site section index archive guide reference manual chapter topic detail example usage option value result search answer research source".split(" ");

/** A tree of PAGES pages: /p/i links to its ten children and to the first ten pages (a menu). */
function pageHtml(i: number): string {
  const children = Array.from({ length: 10 }, (_, k) => 10 * i + k + 1).filter((c) => c < PAGES);
  const menu = Array.from({ length: 10 }, (_, k) => k);
  const para = (n: number) => Array.from({ length: 60 }, (_, k) => WORDS[(i * 7 + n * 13 + k * 3) % WORDS.length]).join(" ");
  return `<!doctype html><html><head><title>Page ${i}</title></head><body><nav>${menu.map((m) => `<a href="/p/${m}">Menu ${m}</a>`).join(" ")}</nav>` +
    `<main><article><h1>Page ${i}</h1>${[1, 2, 3, 4].map((n) => `<p>${para(n)}.</p>`).join("")}` +
    `<ul>${children.map((c) => `<li><a href="/p/${c}">Child ${c}</a></li>`).join("")}</ul></article></main></body></html>`;
}

async function startSite(): Promise<{ url: string; close(): Promise<void> }> {
  const pages = Array.from({ length: PAGES }, (_, i) => Buffer.from(pageHtml(i)));
  const warm = Buffer.from(pageHtml(PAGES).replace(/Page \d+/g, "Warm-up page"));
  const server = createServer((req, res) => {
    const m = /^\/p\/(\d+)$/.exec(req.url ?? "");
    // `/warm` is no page of the tree and no page links to it: the warm server's one scrape before its clock.
    const page = req.url === "/warm" ? warm : m ? pages[Number(m[1])] : undefined;
    if (!page) return res.writeHead(404, { "content-type": "text/plain" }).end("no");
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

class RssSampler {
  private samples: number[] = [];
  // memoryUsage.rss() alone: the full memoryUsage() walks the heap's spaces (milliseconds a call).
  private timer = setInterval(() => this.samples.push(process.memoryUsage.rss()), 200);
  stop() {
    clearInterval(this.timer);
    const mb = (b: number) => Math.round(b / 2 ** 20);
    const half = Math.floor(this.samples.length / 2);
    return { maxMb: mb(Math.max(...this.samples)), firstHalfMaxMb: mb(Math.max(...this.samples.slice(0, half))), secondHalfMaxMb: mb(Math.max(...this.samples.slice(half))) };
  }
}

/** A thread's user + system time in seconds, from its /proc stat (fields 14 and 15, in clock ticks of 1/100 s). */
function taskSeconds(tid: string): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

/**
 * CPU seconds so far: the whole process (every thread), and where /proc has it, by thread: the main
 * thread, V8's platform threads (the first four a process starts after its main one: parallel and
 * concurrent GC, background compilation) and the threads started after them (Quarry's extraction
 * worker; libuv's pool if anything used it). Null parts where there is no /proc.
 */
function cpuSeconds(): Cpu {
  const { user, system } = process.cpuUsage();
  const total = (user + system) / 1e6;
  try {
    const tids = readdirSync("/proc/self/task").filter((t) => t !== String(process.pid)).sort((a, b) => Number(a) - Number(b));
    const sum = (ts: string[]) => ts.reduce((a, t) => a + taskSeconds(t), 0);
    return { total, main: taskSeconds(String(process.pid)), platform: sum(tids.slice(0, 4)), later: sum(tids.slice(4)) };
  } catch {
    return { total, main: null, platform: null, later: null };
  }
}

type Cpu = { total: number; main: number | null; platform: number | null; later: number | null };
const minus = (a: number | null, b: number | null) => (a !== null && b !== null ? a - b : null);
const cpuSince = (from: Cpu): Cpu => {
  const now = cpuSeconds();
  return { total: now.total - from.total, main: minus(now.main, from.main), platform: minus(now.platform, from.platform), later: minus(now.later, from.later) };
};

const pages = createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) });

/** The baseline: breadth-first, CONCURRENCY at a time, fetch + extract, results kept in memory. */
async function baseline(start: string): Promise<{ pages: number; seconds: number; cpu: Cpu }> {
  await loadExtractLibraries(); // outside the clock; a plain loop needs no tokenizer
  const cpu0 = cpuSeconds();
  const t0 = performance.now();
  const seen = new Set<string>([start]);
  const queue = [start];
  const results: Array<{ url: string; markdown?: string }> = [];
  let head = 0;
  let active = 0;
  await new Promise<void>((done) => {
    const pump = () => {
      if (head >= queue.length && active === 0) return done();
      while (active < CONCURRENCY && head < queue.length) {
        const url = queue[head++]!;
        active++;
        void (async () => {
          try {
            const page = await pages.fetchPage(url, { timeoutMs: 15_000 });
            const kind = kindOf(page.contentType, page.body);
            // Extracted in process, as a plain loop would, by the same function scrape uses, asked
            // for what it keeps (markdown), as the crawl job asks for its formats.
            const data = kind ? await contentOf({}, kind, page.body, page.contentType, page.finalUrl, true, { formats: ["markdown"] }) : null;
            results.push({ url, markdown: data?.markdown });
            for (const l of pageLinks(decodeHtml(page.body, page.contentType), page.finalUrl)) {
              const key = frontierKey(l.url);
              if (key && key.startsWith(start.slice(0, start.indexOf("/p/"))) && !seen.has(key)) {
                seen.add(key);
                queue.push(key);
              }
            }
          } finally {
            active--;
            pump();
          }
        })();
      }
    };
    pump();
  });
  return { pages: results.length, seconds: (performance.now() - t0) / 1000, cpu: cpuSince(cpu0) };
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Reads a job's SSE stream (GET /v1/crawl/{id}/events) as a client would, until it ends; resolves
 * with the moment the status event of the finished job arrived (performance.now()), or null if
 * the stream ended without one.
 */
async function followEvents(res: Response): Promise<{ endAt: number | null; pages: number }> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let endAt: number | null = null;
  let pages = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { endAt, pages };
    buf += value;
    // Events are separated by a blank line; each has `event:` and `data:` lines.
    for (let cut = buf.indexOf("\n\n"); cut >= 0; cut = buf.indexOf("\n\n")) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const event = /^event: ?(.*)$/m.exec(block)?.[1];
      if (event === "page") pages++;
      else if (event === "status" && endAt === null) {
        const data = /^data: ?(.*)$/m.exec(block)?.[1] ?? "{}";
        if (["completed", "failed", "cancelled"].includes((JSON.parse(data) as { status: string }).status)) endAt = performance.now();
      }
    }
  }
}

type QuarryRun = { pages: number; seconds: number; sseSeconds: number; finishedSeconds: number; polledSeconds: number; ssePages: number; status: string; cpu: Cpu };

/**
 * Quarry: POST /v1/crawl on SQLite in a fresh folder, followed as a client best would, through
 * its SSE events stream, until the stream's status event says it ended: that is Quarry's time
 * (`seconds`). Also read: the job's own `finished_at`, and a status poll every 500 ms running
 * beside the stream (the measure of earlier rounds). The CPU is counted up to the SSE end.
 */
async function quarry(start: string, warm: boolean): Promise<QuarryRun> {
  const dir = mkdtempSync(join(tmpdir(), "quarry-bench-crawl-"));
  const config = parseConfig({
    QUARRY_DATA_DIR: dir, QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_IP_RATE: "off", QUARRY_LOG_LEVEL: "silent",
    QUARRY_CRAWL_HOST_CONCURRENCY: "0", QUARRY_CRAWL_CONCURRENCY: String(CONCURRENCY), QUARRY_PLANS: '{"free":{"quota":null,"per_minute":100000}}', ...SET_ENV,
  }, "bench");
  const built = await buildPorts(config, nodeRuntime, silent);
  const q = createQuarry(built.ports, config);
  try {
    await ensureAccount(built.ports.keys, "bench", "free", config.plans, Date.now());
    const { key } = await createKey(built.ports.keys, { account: "bench", name: "bench", scopes: ["scrape"] }, Date.now());
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    // Cold: nothing preloaded, the server loads what a crawl needs (the extraction worker, in its own
    // thread) on the job's first page. Warm: as the loop loads its libraries before its clock, the
    // server has crawled one page (`/warm`, outside the tree) before the clock, so its worker is up.
    // The warm-up is a one-page crawl, so the server loads what a crawl loads and no more (a scrape
    // would load the token counter too).
    if (warm) {
      const w = await q.app.request("/v1/crawl", { method: "POST", headers, body: JSON.stringify({ url: `${start.slice(0, start.indexOf("/p/"))}/warm`, limit: 1, max_depth: 0, formats: ["markdown"] }) });
      const { id } = (await w.json()) as { id: string };
      for (;;) {
        const job = (await (await q.app.request(`/v1/crawl/${id}`, { headers })).json()) as { status: string; completed: number };
        if (["completed", "failed", "cancelled"].includes(job.status)) {
          if (job.status !== "completed" || job.completed !== 1) throw new Error(`the warm-up crawl ended ${job.status} with ${job.completed} pages`);
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    const cpu0 = cpuSeconds();
    const t0 = performance.now();
    const startedAt = Date.now();
    const res = await q.app.request("/v1/crawl", { method: "POST", headers, body: JSON.stringify({ url: start, limit: PAGES, max_depth: 10, formats: ["markdown"] }) });
    const { id } = (await res.json()) as { id: string };
    // The client opens the stream right after the POST, as an agent following its job would.
    const sse = followEvents(await q.app.request(`/v1/crawl/${id}/events`, { headers }));
    let cpu: Cpu | null = null;
    const sseEnd = sse.then((r) => {
      cpu = cpuSince(cpu0);
      return r;
    });
    const polled = (async () => {
      for (;;) {
        await new Promise((r) => setTimeout(r, 500));
        const job = (await (await q.app.request(`/v1/crawl/${id}`, { headers })).json()) as { status: string; completed: number; finished_at: string };
        if (["completed", "failed", "cancelled"].includes(job.status)) return { at: performance.now(), job };
      }
    })();
    const [{ endAt, pages: ssePages }, { at: pollAt, job }] = await Promise.all([sseEnd, polled]);
    if (endAt === null) throw new Error("the events stream ended without the job's end");
    return {
      pages: job.completed, seconds: (endAt - t0) / 1000, sseSeconds: (endAt - t0) / 1000,
      finishedSeconds: (Date.parse(job.finished_at) - startedAt) / 1000, polledSeconds: (pollAt - t0) / 1000, ssePages, status: job.status, cpu: cpu!,
    };
  } finally {
    await q.stop();
    await q.drain();
    await built.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const per1000 = (cpu: number, pages: number) => (cpu / Math.max(1, pages)) * 1000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const SELF = fileURLToPath(import.meta.url);
/** How to run this file again in a child process: through tsx from the sources, or as it is when compiled. */
const RERUN = SELF.endsWith(".ts") ? ["--import", "tsx", SELF] : [SELF];
const SITE_FLAG = process.argv.indexOf("--site");

if (process.argv.includes("--serve-site")) {
  // The site's own process: prints its URL, serves until killed.
  const site = await startSite();
  console.log(site.url);
  // Ends with its parent: the parent holds our stdin open until it exits.
  process.stdin.on("end", () => process.exit(0)).resume();
  await new Promise(() => {});
} else if (ONLY && SITE_FLAG > 0) {
  // One run in a fresh process: prints its result as JSON.
  const start = `${process.argv[SITE_FLAG + 1]}/p/0`;
  const rss = new RssSampler();
  const r = ONLY === "baseline" ? await baseline(start) : await quarry(start, ONLY === "quarry-warm");
  console.log(JSON.stringify({ ...r, rss: rss.stop() }));
  process.exit(0);
} else {
  const siteProc = spawn(process.execPath, [...RERUN, "--serve-site", "--pages", String(PAGES)], { stdio: ["pipe", "pipe", "inherit"] });
  const siteUrl = await new Promise<string>((resolve) => siteProc.stdout!.once("data", (d) => resolve(String(d).trim())));
  type Run = { pages: number; seconds: number; finishedSeconds?: number; polledSeconds?: number; ssePages?: number; cpu: Cpu; siteCpu: number | null; rss: { maxMb: number; firstHalfMaxMb: number; secondHalfMaxMb: number } };
  /** The site process's CPU seconds so far (Linux /proc; null elsewhere): what serving the pages cost it during a run. */
  const siteSeconds = (): number | null => {
    try {
      const f = readFileSync(`/proc/${siteProc.pid}/stat`, "utf8");
      const x = f.slice(f.lastIndexOf(")") + 2).split(" ");
      return (Number(x[11]) + Number(x[12])) / 100;
    } catch {
      return null;
    }
  };
  const runs: Record<string, Run[]> = ONLY ? { [ONLY]: [] } : { baseline: [], quarry: [], "quarry-warm": [] };
  const ratios: number[] = [];
  const warmRatios: number[] = [];
  const polledRatios: number[] = [];
  const finishedRatios: number[] = [];
  /** Milliseconds from the job's finished_at to the SSE status event that showed it (per Quarry run). */
  const sseLagMs: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const got: Record<string, Run> = {};
    const order = [["baseline", "quarry", "quarry-warm"], ["quarry", "quarry-warm", "baseline"], ["quarry-warm", "baseline", "quarry"]][(round - 1) % 3]!;
    for (const variant of ONLY ? [ONLY] : order) {
      const site0 = siteSeconds();
      const out = spawnSync(process.execPath, [...RERUN, "--only", variant, "--site", siteUrl, "--pages", String(PAGES), "--concurrency", String(CONCURRENCY), ...SETS.flatMap((kv) => ["--set", kv])], { encoding: "utf8", timeout: 600_000 });
      const site1 = siteSeconds();
      const r = { ...(JSON.parse(out.stdout.trim().split("\n").at(-1)!) as Omit<Run, "siteCpu">), siteCpu: site0 !== null && site1 !== null ? site1 - site0 : null };
      got[variant] = r;
      runs[variant]!.push(r);
      const main = r.cpu.main === null ? "" : ` (main thread ${per1000(r.cpu.main, r.pages).toFixed(2)}, later threads ${per1000(r.cpu.later!, r.pages).toFixed(2)}, V8 platform threads ${per1000(r.cpu.platform!, r.pages).toFixed(2)})`;
      const polled = r.polledSeconds === undefined ? "" : ` by the SSE stream (finished_at at ${r.finishedSeconds!.toFixed(2)} s, SSE end ${Math.round((r.seconds - r.finishedSeconds!) * 1000)} ms after it, ${r.ssePages} page events; a 500 ms poll saw it at ${r.polledSeconds.toFixed(2)} s)`;
      if (r.finishedSeconds !== undefined) sseLagMs.push((r.seconds - r.finishedSeconds) * 1000);
      const site = r.siteCpu === null ? "" : `; the site ${per1000(r.siteCpu, r.pages).toFixed(2)}`;
      console.error(`round ${round} ${variant}: ${r.pages} pages in ${r.seconds.toFixed(1)} s${polled} = ${(r.pages / r.seconds).toFixed(1)} pages/s, ${per1000(r.cpu.total, r.pages).toFixed(2)} CPU s per 1,000 pages${main}${site}, max RSS ${r.rss.maxMb} MB`);
    }
    if (ONLY) continue;
    const loop = got.baseline!.pages / got.baseline!.seconds;
    ratios.push(got.quarry!.pages / got.quarry!.seconds / loop);
    warmRatios.push(got["quarry-warm"]!.pages / got["quarry-warm"]!.seconds / loop);
    polledRatios.push(got.quarry!.pages / got.quarry!.polledSeconds! / loop);
    finishedRatios.push(got.quarry!.pages / got.quarry!.finishedSeconds! / loop);
  }
  siteProc.kill();
  if (SETS.length) console.log(`\nQuarry with ${SETS.join(" ")}`);
  console.log(`\n| variant (${PAGES} pages, ${CONCURRENCY} at a time, ${ROUNDS} rounds) | pages read | pages/s (median) | vs baseline (median of per-round ratios) | CPU s per 1,000 pages (median; main / later threads / V8 platform threads) | the site's CPU s per 1,000 pages | max RSS MB | RSS MB 1st half → 2nd half (last run) |`);
  console.log("|---|---:|---:|---:|---:|---:|---:|---|");
  const cpuCell = (rs: Run[]) => {
    const total = median(rs.map((r) => per1000(r.cpu.total, r.pages))).toFixed(2);
    if (rs.some((r) => r.cpu.main === null)) return total;
    const part = (k: "main" | "later" | "platform") => median(rs.map((r) => per1000(r.cpu[k]!, r.pages))).toFixed(2);
    return `${total} (${part("main")} / ${part("later")} / ${part("platform")})`;
  };
  const siteCell = (rs: Run[]) => (rs.every((r) => r.siteCpu !== null) ? median(rs.map((r) => per1000(r.siteCpu!, r.pages))).toFixed(2) : "–");
  for (const [name, rs] of Object.entries(runs)) {
    const last = rs.at(-1)!.rss;
    const rx = name === "quarry-warm" ? warmRatios : ratios;
    const vs = name === "baseline" ? "1.00" : rx.length ? `${median(rx).toFixed(2)} (${rx.map((x) => x.toFixed(2)).join(", ")})` : "–";
    const label = name === "baseline" ? "plain BFS loop: fetch + extract (baseline)" : name === "quarry" ? "Quarry crawl job, SQLite, durable (cold server)" : "Quarry crawl job, SQLite, durable (warm server)";
    console.log(`| ${label} | ${rs.map((r) => r.pages).join(", ")} | ${median(rs.map((r) => r.pages / r.seconds)).toFixed(1)} | ${vs} | ${cpuCell(rs)} | ${siteCell(rs)} | ${Math.max(...rs.map((r) => r.rss.maxMb))} | ${last.firstHalfMaxMb} → ${last.secondHalfMaxMb} |`);
  }
  const list = (xs: number[]) => `${median(xs).toFixed(2)} (${xs.map((x) => x.toFixed(2)).join(", ")})`;
  console.log("\nQuarry's time is the job's end as its SSE events stream showed it to the client. Cold: a fresh server whose first job this is (it starts its extraction worker). Warm: a fresh server that has crawled one page (outside the tree) before the clock, as the loop loads its libraries before its own.");
  if (ratios.length) {
    console.log(`Its end by the job's own finished_at: ${list(finishedRatios)} of the loop; as a 500 ms status poll saw it: ${list(polledRatios)}.`);
  }
  if (sseLagMs.length) console.log(`SSE end after finished_at, ms: ${sseLagMs.map((x) => Math.round(x)).join(", ")} (median ${Math.round(median(sseLagMs))}).`);
}
process.exit(0);
