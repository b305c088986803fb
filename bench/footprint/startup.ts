/**
 * Start-up and idle footprint on Node, Deno and Bun (#16), each against a bare Hono server on the
 * same runtime in the same run (bare.mjs):
 * - start-up: from spawning the process to the first 200 from GET /health, polled every 5 ms on a
 *   port chosen beforehand (median of --runs, after one warm-up start that is not counted);
 * - idle RSS two seconds after that answer (median of the same runs);
 * - RSS under --connections concurrent keep-alive connections over --bursts bursts of --amount
 *   requests each (autocannon): Quarry's GET /v1/usage with a key (authentication, both limits,
 *   the counters), the bare server's GET /health; then after 5 s idle.
 * Quarry runs with its defaults on SQLite (every feature available; heavy modules load on first
 * use). On Node it runs dist/ when fresh, as `npm start` does: run `npm run build` first.
 *   npx tsx bench/footprint/startup.ts [--runs 5] [--connections 200] [--bursts 5] [--amount 4000] [--runtimes node,deno,bun]
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { freePort } from "../../tests/helpers/private-services.ts";
import { createKeyCli, ROOT, tempDataDir } from "../../tests/helpers/server.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    connections: { type: "string", default: "200" },
    bursts: { type: "string", default: "5" },
    amount: { type: "string", default: "4000" },
    runtimes: { type: "string", default: "node,deno,bun" },
  },
});
const RUNS = Number(values.runs);
const CONNECTIONS = Number(values.connections);
const BURSTS = Number(values.bursts);
const AMOUNT = Number(values.amount);
type Runtime = "node" | "deno" | "bun";
const RUNTIMES = values.runtimes!.split(",") as Runtime[];

const BIN = join(ROOT, "node_modules", ".bin");
const BARE = join(ROOT, "bench/footprint/bare.mjs");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssMb = (pid: number) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function command(runtime: Runtime, bare: boolean): [string, string[]] {
  if (runtime === "node") return [process.execPath, bare ? [BARE] : [join(ROOT, "bin/quarry.js"), "serve"]];
  if (runtime === "deno") {
    return [join(BIN, "deno"), ["run", "--allow-net", "--allow-read", "--allow-write", "--allow-env", "--allow-ffi", "--allow-sys", bare ? BARE : join(ROOT, "adapters/deno/server.ts")]];
  }
  return [join(BIN, "bun"), [bare ? BARE : join(ROOT, "adapters/bun/server.ts")]];
}

interface Started {
  proc: ChildProcess;
  url: string;
  ms: number;
}

/** Spawns and polls GET /health until it answers 200; the time is from spawn to that answer. */
async function start(runtime: Runtime, bare: boolean, env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const [cmd, args] = command(runtime, bare);
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const proc = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), QUARRY_HOST: "127.0.0.1", QUARRY_PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  proc.stderr!.on("data", (d) => (err += d));
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${runtime} ${bare ? "bare" : "quarry"} exited: ${err}`);
    const ok = await fetch(`${url}/health`).then((r) => r.status === 200, () => false);
    if (ok) return { proc, url, ms: performance.now() - t0 };
    if (performance.now() - t0 > 30_000) throw new Error(`${runtime} did not answer in 30 s: ${err}`);
    await sleep(5);
  }
}

async function stop(s: Started): Promise<void> {
  if (s.proc.exitCode !== null) return;
  await new Promise<void>((r) => {
    s.proc.once("exit", () => r());
    s.proc.kill("SIGTERM");
  });
}

async function startup(runtime: Runtime, bare: boolean, env: Record<string, string>) {
  await stop(await start(runtime, bare, env)); // warm-up: compile caches, the page cache
  const ms: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const s = await start(runtime, bare, env);
    ms.push(s.ms);
    await sleep(2_000);
    rss.push(rssMb(s.proc.pid!));
    await stop(s);
  }
  return { ms: Math.round(median(ms)), msRange: `${Math.round(Math.min(...ms))}–${Math.round(Math.max(...ms))}`, rss: median(rss) };
}

async function underLoad(runtime: Runtime, bare: boolean, env: Record<string, string>, key: string | null) {
  const s = await start(runtime, bare, env);
  const pid = s.proc.pid!;
  await sleep(1_000);
  const series = [rssMb(pid)];
  let errors = 0;
  let non2xx = 0;
  let p99 = 0;
  for (let b = 0; b < BURSTS; b++) {
    const r = await autocannon({
      url: s.url + (bare ? "/health" : "/v1/usage"),
      connections: CONNECTIONS,
      amount: AMOUNT,
      headers: key ? { authorization: `Bearer ${key}` } : {},
    });
    errors += r.errors + r.timeouts;
    non2xx += r.non2xx;
    p99 = Math.max(p99, r.latency.p99);
    series.push(rssMb(pid));
  }
  await sleep(5_000);
  series.push(rssMb(pid));
  await stop(s);
  return { series, errors, non2xx, p99 };
}

const lines: string[] = [];
const loadRows: string[] = [];
for (const runtime of RUNTIMES) {
  const dataDir = tempDataDir();
  const env: Record<string, string> = {
    QUARRY_DATA_DIR: dataDir, QUARRY_LOG_LEVEL: "warn", QUARRY_IP_RATE: "off",
    QUARRY_PLANS: '{"bench":{"quota":null,"per_minute":100000000}}',
  };
  const { key } = createKeyCli(env, "bench", "search", "bench");
  const bare = await startup(runtime, true, {});
  const quarry = await startup(runtime, false, env);
  lines.push(`| ${runtime} | ${bare.ms} (${bare.msRange}) | ${quarry.ms} (${quarry.msRange}) | ${bare.rss} | ${quarry.rss} | ${(quarry.rss / bare.rss).toFixed(1)}× |`);
  const bl = await underLoad(runtime, true, {}, null);
  const ql = await underLoad(runtime, false, env, key);
  for (const [name, l] of [["bare Hono", bl], ["Quarry", ql]] as const) {
    const s = l.series;
    loadRows.push(`| ${runtime} | ${name} | ${s.join(" → ")} | ${s[BURSTS] - s[1]} | ${l.p99} | ${l.errors} | ${l.non2xx} |`);
  }
  console.log(lines.at(-1));
  console.log(loadRows.slice(-2).join("\n"));
}

const table = [
  `Node ${process.version}; ${RUNS} starts per server after one warm-up; idle RSS 2 s after the first answer; medians (range of the start times).`,
  "",
  "| runtime | bare Hono: first /health (ms) | Quarry: first /health (ms) | bare Hono: idle RSS (MB) | Quarry: idle RSS (MB) | Quarry / bare |",
  "|---|---:|---:|---:|---:|---:|",
  ...lines,
  "",
  `${CONNECTIONS} concurrent connections, ${BURSTS} bursts of ${AMOUNT} requests (autocannon); RSS in MB before the first burst, after each burst, then after 5 s idle.`,
  "",
  `| runtime | server | RSS (MB) | burst 1 → ${BURSTS} | p99 latency (ms) | errors | non-2xx |`,
  "|---|---|---|---:|---:|---:|---:|",
  ...loadRows,
].join("\n");
console.log(`\n${table}`);
writeFileSync(new URL("./RESULTS.startup.part.md", import.meta.url), `${table}\n`);
