/**
 * A CPU profile of `quarry serve` under load, on one runtime and one route (issue #33): where a
 * request's time goes, by function (self time) and by the functions that hold it (total time).
 *
 *   npx tsx bench/gateway/profile.ts --runtime deno --route usage [--seconds 6] [--top 40] [--keep]
 *   npx tsx bench/gateway/profile.ts --file some.cpuprofile   (a profile written elsewhere, e.g. bun --cpu-prof)
 *
 * Node and Bun write their own profile (`--cpu-prof`); Deno is profiled through its inspector
 * (`--inspect`, the Profiler domain over a WebSocket driven by a small Deno script). Load is
 * wrk -t1 -c50 (autocannon when wrk is not on PATH), as in bench/gateway/run.ts; the server logs at info to a file as there.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createServer } from "node:http";
import autocannon from "autocannon";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "node_modules/.bin");
const { values } = parseArgs({
  options: {
    runtime: { type: "string", default: "node" },
    route: { type: "string", default: "usage" },
    seconds: { type: "string", default: "6" },
    top: { type: "string", default: "40" },
    keep: { type: "boolean", default: false },
    env: { type: "string", multiple: true, default: [] },
    file: { type: "string" },
  },
});
if (values.file) {
  report(JSON.parse(readFileSync(values.file, "utf8")));
  process.exit(0);
}
const runtime = values.runtime as "node" | "deno" | "bun";
const work = mkdtempSync(join(tmpdir(), "quarry-prof-"));
const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  QUARRY_HOST: "127.0.0.1", QUARRY_PORT: "0", QUARRY_IP_RATE: "off",
  QUARRY_PLANS: '{"enterprise":{"per_minute":1000000000}}', QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
  QUARRY_LOG_LEVEL: "info", QUARRY_DATA_DIR: join(work, "data"),
};
for (const kv of values.env!) {
  const i = kv.indexOf("=");
  env[kv.slice(0, i)] = kv.slice(i + 1);
}

const made = spawnSync(process.execPath, [join(ROOT, "bin/quarry.js"), "keys", "create", "--account", "bench", "--plan", "enterprise", "--scopes", "search,scrape,keys", "--name", "bench", "--json"], { cwd: ROOT, env, encoding: "utf8" });
if (made.status !== 0) throw new Error(made.stderr);
const key = JSON.parse(made.stdout).key as string;

const profDir = join(work, "prof");
let cmd: string;
let args: string[];
if (runtime === "node") [cmd, args] = [process.execPath, ["--cpu-prof", `--cpu-prof-dir=${profDir}`, join(ROOT, "bin/quarry.js"), "serve"]];
else if (runtime === "bun") [cmd, args] = [join(BIN, "bun"), ["--cpu-prof", `--cpu-prof-dir=${profDir}`, join(ROOT, "adapters/bun/server.ts")]];
else [cmd, args] = [join(BIN, "deno"), ["run", "-A", "--inspect=127.0.0.1:0", join(ROOT, "adapters/deno/server.ts")]];

const log = join(work, "server.log");
const proc: ChildProcess = spawn("sh", ["-c", 'exec "$@" >"$LOG" 2>&1', "sh", cmd, ...args], { cwd: ROOT, env: { ...env, LOG: log }, stdio: "ignore" });
process.on("exit", () => proc.kill("SIGKILL"));

async function until<T>(what: string, poll: () => T | null): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = poll();
    if (v !== null) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}: ${readFileSync(log, "utf8")}`);
}
const text = () => {
  try {
    return readFileSync(log, "utf8");
  } catch {
    return "";
  }
};
const url = await until("quarry", () => /"url":"(http[^"]+)".*"msg":"quarry listening"/.exec(text())?.[1] ?? null);

// The page a scrape reads (then from the cache), as in run.ts.
const PAGE = `<!doctype html><html lang="en"><head><title>Bench article</title></head><body><article><h1>Bench article</h1>${
  "<p>A paragraph of the page the benchmark scrapes, long enough to be read as the page's content rather than its chrome.</p>".repeat(6)
}</article></body></html>`;
const site = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE));
await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
site.unref();
const page = `http://127.0.0.1:${(site.address() as { port: number }).port}/article`;
const route = values.route!;
const target =
  route === "usage" ? { path: "/v1/usage", method: "GET", auth: true }
  : route === "keys" ? { path: "/v1/keys", method: "GET", auth: true }
  : route === "health" ? { path: "/health", method: "GET", auth: false }
  : route === "openapi" ? { path: "/openapi.json", method: "GET", auth: false }
  : route === "post" ? { path: "/v1/scrape", method: "POST", auth: true, body: JSON.stringify({ url: page, formats: ["text"] }) }
  : (() => { throw new Error(`unknown route ${route}`); })();
const headers: Record<string, string> = {};
if (target.auth) headers.Authorization = `Bearer ${key}`;
if (target.body) headers["Content-Type"] = "application/json";
const useWrk = spawnSync("wrk", ["--version"]).error === undefined;
const load = async (secs: number): Promise<string> => {
  if (useWrk) {
    const lua = [`wrk.method = "${target.method}"`, ...Object.entries(headers).map(([k, v]) => `wrk.headers["${k}"] = "${v}"`)];
    if (target.body) lua.push(`wrk.body = '${target.body}'`);
    writeFileSync(join(work, "s.lua"), lua.join("\n"));
    const p = spawn("wrk", ["-t1", "-c50", `-d${secs}s`, "--latency", "-s", join(work, "s.lua"), url + target.path]);
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    await new Promise((r) => p.on("exit", r));
    return out;
  }
  const r = await autocannon({ url: url + target.path, method: target.method as "GET", body: target.body, headers, connections: 50, duration: secs });
  return `${Math.round(r.requests.average)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`;
};

// Warm up, then profile the measured window only where the runtime lets us (Deno); Node and Bun profile from start.
await load(2);
let profile: unknown;
if (runtime === "deno") {
  const ws = await until("the inspector", () => /(ws:\/\/\S+)/.exec(text())?.[1] ?? null);
  const client = join(work, "cdp.mjs");
  writeFileSync(client, `
const ws = new WebSocket(Deno.args[0]);
let id = 0; const waiting = new Map();
const call = (method, params = {}) => new Promise((res) => { const i = ++id; waiting.set(i, res); ws.send(JSON.stringify({ id: i, method, params })); });
ws.onmessage = (e) => { const m = JSON.parse(e.data); if (m.id && waiting.has(m.id)) { waiting.get(m.id)(m.result); waiting.delete(m.id); } };
await new Promise((r) => (ws.onopen = r));
await call("Profiler.enable");
await call("Profiler.setSamplingInterval", { interval: 1000 });
await call("Profiler.start");
console.log("STARTED");
await new Promise((r) => setTimeout(r, Number(Deno.args[1]) * 1000));
const { profile } = await call("Profiler.stop");
await Deno.writeTextFile(Deno.args[2], JSON.stringify(profile));
ws.close();
`);
  const out = join(work, "deno.cpuprofile");
  const c = spawn(join(BIN, "deno"), ["run", "-A", client, ws, String(Number(values.seconds) + 1), out], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((r) => c.stdout!.on("data", (d) => String(d).includes("STARTED") && r()));
  console.log(await load(Number(values.seconds)));
  await new Promise((r) => c.on("exit", r));
  profile = JSON.parse(readFileSync(out, "utf8"));
  proc.kill("SIGTERM");
} else {
  console.log(await load(Number(values.seconds)));
  proc.kill("SIGTERM");
  await new Promise((r) => proc.on("exit", r));
  const file = await until("the profile", () => {
    try {
      return readdirSync(profDir).find((f) => f.endsWith(".cpuprofile")) ?? null;
    } catch {
      return null;
    }
  });
  await new Promise((r) => setTimeout(r, 500));
  profile = JSON.parse(readFileSync(join(profDir, file), "utf8"));
}

report(profile);
if (values.keep) console.log(`\nkept in ${work}`);
else rmSync(work, { recursive: true, force: true });
process.exit(0);

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[]; hitCount?: number }
function report(profile: unknown): void {
const p = profile as { nodes: Node[]; samples?: number[]; timeDeltas?: number[] };
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
if (p.samples && p.timeDeltas) {
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0));
} else for (const n of p.nodes) self.set(n.id, n.hitCount ?? 0);
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n: Node) => `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.replace(/^file:\/\//, "").replace(ROOT, "").replace(/.*node_modules\//, "nm/")}:${n.callFrame.lineNumber + 1}`;
const total = [...self.values()].reduce((a, b) => a + b, 0);
const selfBy = new Map<string, number>();
const totalBy = new Map<string, number>();
for (const [id, t] of self) {
  const n = byId.get(id)!;
  selfBy.set(label(n), (selfBy.get(label(n)) ?? 0) + t);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur)!);
    if (seen.has(l)) continue;
    seen.add(l);
    totalBy.set(l, (totalBy.get(l) ?? 0) + t);
  }
}
const top = Number(values.top);
const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)} %`;
console.log(`\nself time (of ${(total / 1e6).toFixed(2)} s sampled)`);
for (const [l, t] of [...selfBy].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${l}`);
console.log(`\ntotal time`);
for (const [l, t] of [...totalBy].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${l}`);
}
