/**
 * Footprint benchmark (issue #19 item 5): resident memory of a real `quarry serve` process
 * through bursts of scrapes of distinct local pages (the 181 real article pages of the
 * article-extraction benchmark, $QUARRY_BENCH_DATA, served on 127.0.0.1), then after idling, against a bare Hono server
 * measured in the same run. RSS is read from /proc/<pid>/status (Linux).
 * Each value of --workers is one server in the same run (QUARRY_EXTRACT_WORKERS: 0 = extraction
 * in process, as before #19 item 5; 2 = the default pool of worker threads).
 *   npx tsx bench/footprint/run.ts [--bursts 6] [--idle 20] [--concurrency 8] [--formats markdown] [--workers 0,2]
 * Extra server settings pass through the environment (e.g. QUARRY_CACHE_MAX_BYTES=…). Run
 * `npm run build` first: the server runs from dist/ (as `npm start` does) when it is fresh.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { parseArgs } from "node:util";
import { benchSet } from "../data.ts";
import { createKeyCli, startServer, tempDataDir } from "../../tests/helpers/server.ts";

const { values } = parseArgs({
  options: {
    bursts: { type: "string", default: "6" },
    idle: { type: "string", default: "20" },
    concurrency: { type: "string", default: "8" },
    formats: { type: "string", default: "markdown" },
    workers: { type: "string", default: "0,2" },
  },
});
const BURSTS = Number(values.bursts);
const IDLE_S = Number(values.idle);
const CONCURRENCY = Number(values.concurrency);
const FORMATS = values.formats!.split(",");
const MODES = values.workers!.split(",").map(Number);

const rssMb = (pid: number) => {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  return Math.round(kb / 1024);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The pages, decompressed once here (in the benchmark process, not the server's).
const dir = join(benchSet("article-extraction"), "html");
const pages = new Map(readdirSync(dir).filter((f) => f.endsWith(".html.gz")).map((f) => [f.replace(".html.gz", ""), gunzipSync(readFileSync(join(dir, f)))]));
const site = createServer((req, res) => {
  const id = (req.url ?? "").split("?")[0].replace("/p/", "");
  const body = pages.get(id);
  if (!body) return res.writeHead(404).end();
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
});
await new Promise<void>((r) => site.listen(0, "127.0.0.1", () => r()));
const siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
const ids = [...pages.keys()];
const pageMb = [...pages.values()].reduce((a, b) => a + b.length, 0) / 2 ** 20;

async function startBare(): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, [new URL("./bare.mjs", import.meta.url).pathname], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((res) => {
    let buf = "";
    proc.stdout!.on("data", (d) => {
      buf += d;
      const m = /READY (\S+)/.exec(buf);
      if (m) res(m[1]);
    });
  });
  return { proc, url };
}

async function burst(url: string, secret: string, tag: string): Promise<{ ok: number; failed: number; cached: number; p50: number; p95: number }> {
  let next = 0;
  const out = { ok: 0, failed: 0, cached: 0 };
  const ms: number[] = [];
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < ids.length) {
      const id = ids[next++];
      const t0 = performance.now();
      const res = await fetch(`${url}/v1/scrape`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ url: `${siteUrl}/p/${id}?burst=${tag}`, formats: FORMATS }),
      });
      const body = await res.json().catch(() => null);
      ms.push(performance.now() - t0);
      if (res.ok) out.ok++;
      else out.failed++;
      if (body?.meta?.cached) out.cached++;
    }
  }));
  ms.sort((a, b) => a - b);
  return { ...out, p50: Math.round(ms[Math.floor(ms.length / 2)]), p95: Math.round(ms[Math.floor(ms.length * 0.95)]) };
}

// Baseline first: a bare server, idle, and after the same number of trivial requests.
const bare = await startBare();
await sleep(2_000);
const bareIdle = rssMb(bare.proc.pid!);
await Promise.all(ids.map((id) => fetch(`${bare.url}/v1/scrape`, { method: "POST", body: JSON.stringify({ url: id }), headers: { "content-type": "application/json" } }).then((r) => r.text())));
const bareAfter = rssMb(bare.proc.pid!);
bare.proc.kill();

const base: Record<string, string> = {
  QUARRY_IP_RATE: "off", QUARRY_LOG_LEVEL: "info", QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
  QUARRY_PLANS: '{"bench":{"quota":null,"per_minute":1000000}}',
};
for (const [k, v] of Object.entries(process.env)) if (k.startsWith("QUARRY_CACHE_") && v) base[k] = v;

/** One server through the whole sequence: rows of [moment, RSS MB, notes]. */
async function measure(workers: number): Promise<Array<[string, number, string]>> {
  const env = { ...base, QUARRY_DATA_DIR: tempDataDir(), QUARRY_EXTRACT_WORKERS: String(workers) };
  const { key } = createKeyCli(env, "bench", "scrape", "bench");
  const server = await startServer("node", env);
  const pid = server.proc.pid!;
  await sleep(2_000);
  const rows: Array<[string, number, string]> = [["idle after start", rssMb(pid), ""]];
  for (let b = 1; b <= BURSTS; b++) {
    const t0 = Date.now();
    const r = await burst(server.url, key, `${workers}-${b}`);
    rows.push([`after burst ${b}`, rssMb(pid), `${r.ok} ok, ${r.failed} failed, ${((Date.now() - t0) / 1000).toFixed(1)} s, p50 ${r.p50} ms, p95 ${r.p95} ms`]);
  }
  const again = await burst(server.url, key, `${workers}-1`);
  rows.push([`burst 1 again (cache hits)`, rssMb(pid), `${again.ok} ok, ${again.cached} cached`]);
  for (let s = 1; s <= IDLE_S; s++) {
    await sleep(1_000);
    if (s % 5 === 0 || s === IDLE_S) rows.push([`after ${s} s idle`, rssMb(pid), ""]);
  }
  await server.stop();
  return rows;
}

const results: Array<Array<[string, number, string]>> = [];
for (const w of MODES) results.push(await measure(w));
site.close();

const label = (w: number) => (w === 0 ? "in process (QUARRY_EXTRACT_WORKERS=0)" : `${w} extraction workers`);
const table = [
  `Pages: ${ids.length} real articles (${pageMb.toFixed(1)} MB of HTML), formats ${FORMATS.join(",")}, ${CONCURRENCY} at a time; ` +
    `node ${process.version}, ${Object.entries(base).filter(([k]) => k.startsWith("QUARRY_CACHE_")).map(([k, v]) => `${k}=${v}`).join(" ") || "default cache settings"}.`,
  "",
  `| moment | ${MODES.map((w) => `RSS (MB), ${label(w)}`).join(" | ")} | ${MODES.map((w) => `notes, ${label(w)}`).join(" | ")} |`,
  `|---|${MODES.map(() => "---:").join("|")}|${MODES.map(() => "---").join("|")}|`,
  `| bare Hono server, idle | ${MODES.map(() => bareIdle).join(" | ")} | ${MODES.map(() => "baseline, same run").join(" | ")} |`,
  `| bare Hono server, after ${ids.length} requests | ${MODES.map(() => bareAfter).join(" | ")} | ${MODES.map(() => "").join(" | ")} |`,
  ...results[0].map(([m], i) => `| quarry serve, ${m} | ${results.map((r) => r[i][1]).join(" | ")} | ${results.map((r) => r[i][2]).join(" | ")} |`),
  "",
  ...MODES.map((w, j) => `${label(w)}: idle after start ${results[j][0][1]} MB; after the bursts and ${IDLE_S} s idle ${results[j].at(-1)![1]} MB (${results[j].at(-1)![1] - results[j][0][1]} MB above idle); highest ${Math.max(...results[j].map((r) => r[1]))} MB.`),
].join("\n");
console.log(table);
writeFileSync(new URL("./RESULTS.part.md", import.meta.url), `${table}\n`);
