/**
 * Gateway benchmark: throughput and p99 of an authenticated, limited, metered request
 * against a bare Hono route, measured in the same run with the same client (autocannon,
 * 50 connections in all) on this machine. Single-process rows: bare, SQLite, memory.
 * Three-instance rows: PostgreSQL alone and PostgreSQL + Redis (a throwaway database on the
 * local server), with the 50 connections spread over the three. Rounds alternate variants
 * to spread machine noise; the table reports each variant's median round and the ratio to bare.
 *   npx tsx bench/gateway/run.ts [--seconds 8] [--rounds 3] [--variants bare,sqlite,memory,pg,pg+redis]
 */
import { spawn, type ChildProcess } from "node:child_process";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { tempDatabase } from "../../tests/helpers/pg.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "8" },
    rounds: { type: "string", default: "3" },
    variants: { type: "string", default: "bare,sqlite,memory,pg,pg+redis" },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const REDIS = process.env.BENCH_REDIS ?? "redis://127.0.0.1:6379";

interface Variant { id: string; label: string; instances: number; env: Record<string, string>; shared?: boolean }
const ALL: Variant[] = [
  { id: "bare", label: "bare Hono route (baseline)", instances: 1, env: { MODE: "bare" } },
  { id: "sqlite", label: "Quarry gateway, SQLite (embedded)", instances: 1, env: { MODE: "quarry", STORAGE: "sqlite" } },
  { id: "memory", label: "Quarry gateway, memory", instances: 1, env: { MODE: "quarry", STORAGE: "memory" } },
  { id: "pg", label: "Quarry gateway, PostgreSQL, 3 instances", instances: 3, env: { MODE: "quarry" }, shared: true },
  { id: "pg+redis", label: "Quarry gateway, PostgreSQL + Redis, 3 instances", instances: 3, env: { MODE: "quarry", BENCH_REDIS_URL: REDIS }, shared: true },
];
const variants = values.variants!.split(",").map((id) => ALL.find((v) => v.id === id)!).filter(Boolean);

function startOne(env: Record<string, string>): Promise<{ proc: ChildProcess; url: string; secret: string }> {
  const proc = spawn(process.execPath, ["--import", "tsx", new URL("./serve.ts", import.meta.url).pathname], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((res) => {
    let buf = "";
    proc.stdout!.on("data", (d) => {
      buf += d;
      const m = /READY (\S+) (\S+)/.exec(buf);
      if (m) res({ proc, url: m[1], secret: m[2] });
    });
  });
}

const tempDb = () => tempDatabase("bench");

async function measure(v: Variant) {
  const db = v.shared ? await tempDb() : null;
  const env = { ...v.env, ...(db ? { BENCH_DATABASE_URL: db.url } : {}) };
  const first = await startOne(env);
  const rest = await Promise.all(Array.from({ length: v.instances - 1 }, () => startOne({ ...env, BENCH_SECRET: first.secret })));
  const servers = [first, ...rest];
  const per = Math.floor(50 / servers.length);
  const opts = (url: string, i: number) => ({
    url: `${url}/v1/bench`, method: "POST" as const, connections: i === 0 ? 50 - per * (servers.length - 1) : per,
    headers: { "content-type": "application/json", authorization: `Bearer ${first.secret}` }, body: JSON.stringify({ query: "bench" }),
  });
  await Promise.all(servers.map((s, i) => autocannon({ ...opts(s.url, i), duration: 2 }))); // warm-up
  const runs = await Promise.all(servers.map((s, i) => autocannon({ ...opts(s.url, i), duration: seconds })));
  for (const s of servers) s.proc.kill();
  await db?.drop().catch(() => {});
  const bad = runs.reduce((a, r) => a + r.non2xx + r.errors + r.timeouts, 0);
  if (bad > 0) throw new Error(`${v.label}: ${bad} failed requests`);
  return {
    rps: runs.reduce((a, r) => a + r.requests.average, 0),
    p50: Math.max(...runs.map((r) => r.latency.p50)),
    p99: Math.max(...runs.map((r) => r.latency.p99)),
  };
}

const results = new Map<string, Array<{ rps: number; p99: number; p50: number }>>();
for (let i = 0; i < rounds; i++) {
  for (const v of variants) {
    const m = await measure(v);
    results.set(v.id, [...(results.get(v.id) ?? []), m]);
    console.error(`round ${i + 1} ${v.label}: ${Math.round(m.rps)} req/s, p99 ${m.p99} ms`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = results.get("bare") ? median(results.get("bare")!.map((m) => m.rps)) : NaN;
console.log(`\n| variant | req/s (median of ${rounds}) | p50 ms | p99 ms | vs bare |`);
console.log("|---|---:|---:|---:|---:|");
for (const v of variants) {
  const ms = results.get(v.id)!;
  const rps = median(ms.map((m) => m.rps));
  console.log(`| ${v.label} | ${Math.round(rps)} | ${median(ms.map((m) => m.p50))} | ${median(ms.map((m) => m.p99))} | ${(rps / base).toFixed(2)} |`);
}
console.log(`\nnode ${process.version}, ${cpus().length} cores, ${seconds} s per round, 50 connections in all`);
process.exit(0);
