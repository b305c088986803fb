/**
 * Gateway benchmark: throughput and p99 of an authenticated, limited, metered request
 * against a bare Hono route, measured in the same run with the same client (autocannon,
 * 50 connections) on this machine. Rounds alternate bare/quarry to spread machine noise;
 * the table reports each variant's median round and the ratio to bare.
 *   npx tsx bench/gateway/run.ts [--seconds 8] [--rounds 3] [--storage sqlite,memory]
 */
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";
import autocannon from "autocannon";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "8" }, rounds: { type: "string", default: "3" }, storage: { type: "string", default: "sqlite,memory" } } });
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);

interface Variant { label: string; env: Record<string, string> }
const variants: Variant[] = [
  { label: "bare Hono route (baseline)", env: { MODE: "bare" } },
  ...values.storage!.split(",").map((s) => ({ label: `Quarry gateway, ${s}`, env: { MODE: "quarry", STORAGE: s } })),
];

async function start(env: Record<string, string>) {
  const proc = spawn(process.execPath, ["--import", "tsx", new URL("./serve.ts", import.meta.url).pathname], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise<string>((res) => {
    let buf = "";
    proc.stdout!.on("data", (d) => {
      buf += d;
      const m = /READY (\S+) (\S+)/.exec(buf);
      if (m) res(m[0]);
    });
  });
  const [, url, secret] = line.split(" ");
  return { proc, url, secret };
}

async function measure(v: Variant) {
  const { proc, url, secret } = await start(v.env);
  const opts = {
    url: `${url}/v1/bench`, method: "POST" as const, connections: 50,
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` }, body: JSON.stringify({ query: "bench" }),
  };
  await autocannon({ ...opts, duration: 2 }); // warm-up: JIT, SQLite pages
  const r = await autocannon({ ...opts, duration: seconds });
  proc.kill();
  const bad = r.non2xx + r.errors + r.timeouts;
  if (bad > 0) throw new Error(`${v.label}: ${bad} failed requests`);
  return { rps: r.requests.average, p99: r.latency.p99, p50: r.latency.p50 };
}

const results = new Map<string, Array<{ rps: number; p99: number; p50: number }>>();
for (let i = 0; i < rounds; i++) {
  for (const v of variants) {
    const m = await measure(v);
    results.set(v.label, [...(results.get(v.label) ?? []), m]);
    console.error(`round ${i + 1} ${v.label}: ${Math.round(m.rps)} req/s, p99 ${m.p99} ms`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(results.get(variants[0].label)!.map((m) => m.rps));
console.log(`\n| variant | req/s (median of ${rounds}) | p50 ms | p99 ms | vs bare |`);
console.log("|---|---:|---:|---:|---:|");
for (const v of variants) {
  const ms = results.get(v.label)!;
  const rps = median(ms.map((m) => m.rps));
  console.log(`| ${v.label} | ${Math.round(rps)} | ${median(ms.map((m) => m.p50))} | ${median(ms.map((m) => m.p99))} | ${(rps / base).toFixed(2)} |`);
}
console.log(`\nnode ${process.version}, ${(await import("node:os")).cpus().length} cores, ${seconds} s per round, 50 connections`);
