/**
 * Gateway benchmark (issue #33): what the gateway costs on each runtime, against a bare Hono app
 * on the same runtime's own server, measured in the same run with the same client.
 *
 *   npm run bench:gateway [-- --quick] [--seconds 6] [--rounds 3] [--runtimes node,deno,bun]
 *                         [--routes usage,keys,post,health,openapi] [--no-pg] [--connections 50]
 *                         [--pg-variants pg,redis]   (which three-instance rows: PostgreSQL, PostgreSQL + Redis;
 *                                                     --runtimes '' leaves out the single-instance rows)
 *
 * Quarry is `quarry serve` as an operator runs it: Node from dist/ (built first), Deno and Bun
 * from their adapters, on its SQLite default, logging every request at info to a file,
 * QUARRY_IP_RATE=off, one key on the `enterprise` plan whose per-minute limit QUARRY_PLANS puts
 * out of reach, so that no request is refused. The bare app is bench/footprint/bare.mjs.
 *
 * Routes (Quarry → its bare counterpart):
 *   usage   GET /v1/usage (key, scope, per-minute window, quota)      → GET /health {"status":"ok"}
 *   keys    GET /v1/keys (the same, and the account's keys)             → GET /health
 *   post    POST /v1/scrape of a local page: body validated, a cached
 *           answer, one unit counted (checked against /v1/usage after)  → POST /v1/scrape echoing the url
 *   health  GET /health                                                  → GET /health
 *   openapi GET /openapi.json                                            → GET /openapi.json sending the same bytes
 *
 * Rounds alternate Quarry and bare route by route (who goes first swaps each round); the table
 * gives medians of the rounds. CPU µs per request is the server process's utime + stime
 * (/proc/<pid>/stat, all its threads) over the requests it answered in the window, which the
 * shared machine's other load disturbs less than req/s.
 *
 * PostgreSQL rows: three Node instances on one throwaway database (and on Redis), the
 * connections spread over them, beside the Node bare app in the same round; CPU is the sum of
 * the three processes.
 *
 * The client is wrk (-t1 per server, --latency) when it is on PATH, else autocannon, which
 * saturates one core sooner and so understates the bare app; the output says which.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { tempDatabase } from "../../tests/helpers/pg.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "node_modules/.bin");

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    seconds: { type: "string" },
    rounds: { type: "string" },
    runtimes: { type: "string", default: "node,deno,bun" },
    routes: { type: "string", default: "usage,keys,post,health,openapi" },
    "no-pg": { type: "boolean", default: false },
    "pg-variants": { type: "string", default: "pg,redis" },
    connections: { type: "string", default: "50" },
  },
});
const seconds = Number(values.seconds ?? (values.quick ? 2 : 6));
const rounds = Number(values.rounds ?? (values.quick ? 1 : 3));
const connections = Number(values.connections);
const REDIS = process.env.BENCH_REDIS ?? "redis://127.0.0.1:6379";
const useWrk = spawnSync("wrk", ["--version"]).error === undefined;
const work = mkdtempSync(join(tmpdir(), "quarry-bench-gw-"));

type Runtime = "node" | "deno" | "bun";
type RouteId = "usage" | "keys" | "post" | "health" | "openapi";

interface Target { url: string; method: "GET" | "POST"; body?: string; headers: Record<string, string> }
interface Load { rps: number; requests: number; bad: number; p50: number; p99: number }
interface Measure extends Load { cpuUsPerReq: number }

// ---------------------------------------------------------------- processes

function runtimeCommand(runtime: Runtime, script: string): [string, string[]] {
  if (runtime === "deno") return [join(BIN, "deno"), ["run", "--allow-net", "--allow-read", "--allow-write", "--allow-env", "--allow-ffi", "--allow-sys", script]];
  if (runtime === "bun") return [join(BIN, "bun"), [script]];
  return [process.execPath, [script]];
}

const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

function cpuTicks(pid: number): number {
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]);
}
const TICK_US = 1e6 / Number(spawnSync("getconf", ["CLK_TCK"]).stdout?.toString().trim() || 100);

async function waitFor<T>(what: string, poll: () => T | null, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = poll();
    if (v !== null) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Running { proc: ChildProcess; url: string; log: string }

async function startBare(runtime: Runtime, documentPath: string): Promise<Running> {
  const [cmd, args] = runtimeCommand(runtime, join(ROOT, "bench/footprint/bare.mjs"));
  const proc = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, PORT: "0", BARE_DOCUMENT: documentPath }, stdio: ["ignore", "pipe", "inherit"] });
  children.add(proc);
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  const url = await waitFor(`the bare app on ${runtime}`, () => /READY (\S+)/.exec(out)?.[1] ?? null);
  return { proc, url, log: "" };
}

function quarryCommand(runtime: Runtime): [string, string[]] {
  if (runtime === "node") return [process.execPath, [join(ROOT, "bin/quarry.js"), "serve"]];
  return runtimeCommand(runtime, join(ROOT, `adapters/${runtime}/server.ts`));
}

const PLANS = '{"enterprise":{"per_minute":1000000000}}';

function quarryEnv(extra: Record<string, string>): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    QUARRY_HOST: "127.0.0.1", QUARRY_PORT: "0", QUARRY_IP_RATE: "off", QUARRY_PLANS: PLANS,
    QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_LOG_LEVEL: "info", ...extra,
  };
}

function createKey(env: Record<string, string>): string {
  const r = spawnSync(process.execPath, [join(ROOT, "bin/quarry.js"), "keys", "create", "--account", "bench", "--plan", "enterprise", "--scopes", "search,scrape,keys", "--name", "bench", "--json"], { cwd: ROOT, env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`keys create failed: ${r.stderr}`);
  return JSON.parse(r.stdout).key;
}

let logs = 0;
async function startQuarry(runtime: Runtime, env: Record<string, string>): Promise<Running> {
  const [cmd, args] = quarryCommand(runtime);
  const log = join(work, `quarry-${runtime}-${++logs}.log`);
  // The request log goes to a file, as under a service manager: the benchmark does not read it.
  const proc = spawn("sh", ["-c", 'exec "$@" >"$LOG" 2>&1', "sh", cmd, ...args], { cwd: ROOT, env: { ...env, LOG: log }, stdio: "ignore" });
  children.add(proc);
  const url = await waitFor(`quarry on ${runtime}`, () => {
    let text = "";
    try {
      text = readFileSync(log, "utf8");
    } catch {
      return null;
    }
    if (proc.exitCode !== null) throw new Error(`quarry on ${runtime} exited: ${text}`);
    return /"url":"(http[^"]+)".*"msg":"quarry listening"/.exec(text)?.[1] ?? null;
  });
  return { proc, url, log };
}

async function stop(r: Running): Promise<void> {
  if (r.proc.exitCode !== null) return;
  const done = new Promise((res) => r.proc.once("exit", res));
  r.proc.kill("SIGTERM");
  await Promise.race([done, new Promise((res) => setTimeout(res, 15_000))]);
  children.delete(r.proc);
}

// ---------------------------------------------------------------- load

function parseDuration(s: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(s.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : n * 60_000;
}

function wrkScript(t: Target): string {
  const lua = [`wrk.method = "${t.method}"`];
  if (t.body) lua.push(`wrk.body = '${t.body.replace(/'/g, "\\'")}'`);
  for (const [k, v] of Object.entries(t.headers)) lua.push(`wrk.headers["${k}"] = "${v}"`);
  const path = join(work, `wrk-${Math.random().toString(36).slice(2)}.lua`);
  writeFileSync(path, lua.join("\n"));
  return path;
}

function wrk(t: Target, secs: number, conns: number): Promise<Load> {
  const script = wrkScript(t);
  return new Promise((resolve, reject) => {
    const p = spawn("wrk", ["-t1", `-c${conns}`, `-d${secs}s`, "--timeout", "10s", "--latency", "-s", script, t.url], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("exit", () => {
      rmSync(script, { force: true });
      const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
      const p50 = parseDuration(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? "");
      const p99 = parseDuration(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? "");
      const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
      const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
      const bad = non2xx + (sock ? sock.slice(1).reduce((a, n) => a + Number(n), 0) : 0);
      if (!Number.isFinite(requests)) return reject(new Error(`wrk: ${out}`));
      resolve({ rps, requests, bad, p50, p99 });
    });
  });
}

async function cannon(t: Target, secs: number, conns: number): Promise<Load> {
  const r = await autocannon({ url: t.url, method: t.method, body: t.body, headers: t.headers, connections: conns, duration: secs });
  return { rps: r.requests.average, requests: r.requests.total, bad: r.non2xx + r.errors + r.timeouts, p50: r.latency.p50, p99: r.latency.p99 };
}

const load = (t: Target, secs: number, conns: number) => (useWrk ? wrk(t, secs, conns) : cannon(t, secs, conns));

/** Load on one or more servers at once (the connections split between them), with their CPU. */
async function measure(servers: Running[], targets: Target[], secs: number): Promise<Measure> {
  const per = targets.map((_, i) => Math.floor(connections / targets.length) + (i < connections % targets.length ? 1 : 0));
  const before = servers.map((s) => cpuTicks(s.proc.pid!));
  const loads = await Promise.all(targets.map((t, i) => load(t, secs, per[i]!)));
  const ticks = servers.reduce((a, s, i) => a + cpuTicks(s.proc.pid!) - before[i]!, 0);
  const requests = loads.reduce((a, l) => a + l.requests, 0);
  return {
    rps: loads.reduce((a, l) => a + l.rps, 0),
    requests,
    bad: loads.reduce((a, l) => a + l.bad, 0),
    p50: Math.max(...loads.map((l) => l.p50)),
    p99: Math.max(...loads.map((l) => l.p99)),
    cpuUsPerReq: (ticks * TICK_US) / Math.max(1, requests),
  };
}

// ---------------------------------------------------------------- the page a scrape reads

const PAGE = `<!doctype html><html lang="en"><head><title>Bench article</title></head><body><nav>Home · About</nav><article><h1>Bench article</h1>${
  "<p>A paragraph of the page the benchmark scrapes, long enough to be read as the page's content rather than its chrome.</p>".repeat(6)
}</article><footer>Footer</footer></body></html>`;

function startSite(): Promise<{ server: Server; url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
  });
  return new Promise((res) => server.listen(0, "127.0.0.1", () => res({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/article`, hits: () => hits })));
}

// ---------------------------------------------------------------- the run

function targets(route: RouteId, base: string, key: string | null, page: string): Target {
  const auth: Record<string, string> = key ? { Authorization: `Bearer ${key}` } : {};
  switch (route) {
    case "usage": return { url: `${base}${key ? "/v1/usage" : "/health"}`, method: "GET", headers: auth };
    case "keys": return { url: `${base}${key ? "/v1/keys" : "/health"}`, method: "GET", headers: auth };
    case "health": return { url: `${base}/health`, method: "GET", headers: {} };
    case "openapi": return { url: `${base}/openapi.json`, method: "GET", headers: {} };
    case "post": return { url: `${base}/v1/scrape`, method: "POST", body: JSON.stringify({ url: page, formats: ["text"] }), headers: { ...auth, "Content-Type": "application/json" } };
  }
}

const LABEL: Record<RouteId, string> = {
  usage: "GET /v1/usage", keys: "GET /v1/keys", post: "POST /v1/scrape (cached, metered)", health: "GET /health", openapi: "GET /openapi.json",
};

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface Row { runtime: string; route: string; bare: Measure[]; quarry: Measure[]; ratios: number[] }

function checkOk(what: string, m: Measure): void {
  if (m.bad > 0) throw new Error(`${what}: ${m.bad} of ${m.requests} requests failed or were refused`);
}

/** One request to each target (a scrape reads its page here), then a second of load; how many were answered. */
async function warm(servers: Running[], ts: Target[]): Promise<number> {
  for (const t of ts) {
    const res = await fetch(t.url, { method: t.method, body: t.body, headers: t.headers });
    if (!res.ok) throw new Error(`${t.method} ${t.url}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  }
  return ts.length + (await measure(servers, ts, 1)).requests;
}

async function usedScrapes(base: string, key: string): Promise<number> {
  const body = await (await fetch(`${base}/v1/usage`, { headers: { Authorization: `Bearer ${key}` } })).json();
  return body.endpoints.scrape;
}

async function runRuntime(runtime: Runtime, routes: RouteId[], page: string): Promise<Row[]> {
  const dir = mkdtempSync(join(work, `${runtime}-`));
  const env = quarryEnv({ QUARRY_DATA_DIR: dir });
  const key = createKey(env);
  const quarry = await startQuarry(runtime, env);
  const documentPath = join(work, "openapi.json");
  writeFileSync(documentPath, await (await fetch(`${quarry.url}/openapi.json`)).text());
  const bare = await startBare(runtime, documentPath);
  const rows: Row[] = [];
  let posted = 0;
  try {
    for (const route of routes) {
      const q = targets(route, quarry.url, route === "health" || route === "openapi" ? null : key, page);
      const b = targets(route, bare.url, null, page);
      await warm([bare], [b]);
      const answered = await warm([quarry], [q]);
      if (route === "post") posted += answered;
      rows.push({ runtime, route: LABEL[route], bare: [], quarry: [], ratios: [] });
    }
    for (let round = 0; round < rounds; round++) {
      for (const [i, route] of routes.entries()) {
        const row = rows[i]!;
        const q = targets(route, quarry.url, route === "health" || route === "openapi" ? null : key, page);
        const b = targets(route, bare.url, null, page);
        const order: Array<"bare" | "quarry"> = round % 2 ? ["quarry", "bare"] : ["bare", "quarry"];
        const got: Partial<Record<"bare" | "quarry", Measure>> = {};
        for (const who of order) {
          const m = await measure([who === "bare" ? bare : quarry], [who === "bare" ? b : q], seconds);
          checkOk(`${runtime} ${who} ${row.route}`, m);
          got[who] = m;
          if (who === "quarry" && route === "post") posted += m.requests;
        }
        row.bare.push(got.bare!);
        row.quarry.push(got.quarry!);
        row.ratios.push(got.quarry!.rps / got.bare!.rps);
        console.error(`${runtime} round ${round + 1} ${row.route}: bare ${Math.round(got.bare!.rps)} req/s, Quarry ${Math.round(got.quarry!.rps)} req/s (${(got.quarry!.rps / got.bare!.rps).toFixed(2)}), CPU ${got.bare!.cpuUsPerReq.toFixed(0)} vs ${got.quarry!.cpuUsPerReq.toFixed(0)} µs/req`);
      }
    }
    if (routes.includes("post")) {
      // Every answered scrape was counted (requests still in flight when a window closed count too).
      const used = await usedScrapes(quarry.url, key);
      const ok = used >= posted && used <= posted + connections * (rounds + 2);
      console.error(`${runtime}: usage counted ${used} scrape units for ${posted} answered scrapes (+ those in flight at each window's end): ${ok ? "ok" : "MISMATCH"}`);
      if (!ok) throw new Error(`${runtime}: scrape usage ${used} does not match ${posted} answered`);
    }
  } finally {
    await stop(bare);
    await stop(quarry);
  }
  return rows;
}

async function runShared(label: string, redis: boolean, routes: RouteId[], page: string, bare: Running): Promise<Row[]> {
  const db = await tempDatabase("benchgw");
  const env = quarryEnv({ QUARRY_DATABASE_URL: db.url, ...(redis ? { QUARRY_REDIS_URL: REDIS } : {}) });
  const key = createKey(env);
  const instances: Running[] = [];
  const rows: Row[] = [];
  try {
    for (let i = 0; i < 3; i++) instances.push(await startQuarry("node", env));
    for (const route of routes) {
      const qs = instances.map((s) => targets(route, s.url, key, page));
      const b = targets(route, bare.url, null, page);
      await warm([bare], [b]);
      await warm(instances, qs);
      rows.push({ runtime: label, route: LABEL[route], bare: [], quarry: [], ratios: [] });
    }
    for (let round = 0; round < rounds; round++) {
      for (const [i, route] of routes.entries()) {
        const row = rows[i]!;
        const qs = instances.map((s) => targets(route, s.url, key, page));
        const b = targets(route, bare.url, null, page);
        const mb = await measure([bare], [b], seconds);
        const mq = await measure(instances, qs, seconds);
        checkOk(`${label} ${row.route}`, mq);
        row.bare.push(mb);
        row.quarry.push(mq);
        row.ratios.push(mq.rps / mb.rps);
        console.error(`${label} round ${round + 1} ${row.route}: bare ${Math.round(mb.rps)} req/s, Quarry ×3 ${Math.round(mq.rps)} req/s (${(mq.rps / mb.rps).toFixed(2)}), CPU ${mb.cpuUsPerReq.toFixed(0)} vs ${mq.cpuUsPerReq.toFixed(0)} µs/req`);
      }
    }
  } finally {
    for (const s of instances) await stop(s);
    await db.drop().catch(() => {});
  }
  return rows;
}

function table(rows: Row[]): string {
  const lines = [
    "| runtime | route | bare req/s | Quarry req/s | ratio | bare p50 / p99 ms | Quarry p50 / p99 ms | CPU µs/req bare → Quarry |",
    "|---|---|---:|---:|---:|---:|---:|---:|",
  ];
  const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
  for (const r of rows) {
    const b = (f: (m: Measure) => number) => median(r.bare.map(f));
    const q = (f: (m: Measure) => number) => median(r.quarry.map(f));
    lines.push(`| ${r.runtime} | ${r.route} | ${Math.round(b((m) => m.rps))} | ${Math.round(q((m) => m.rps))} | ${median(r.ratios).toFixed(2)} | ${ms(b((m) => m.p50))} / ${ms(b((m) => m.p99))} | ${ms(q((m) => m.p50))} / ${ms(q((m) => m.p99))} | ${b((m) => m.cpuUsPerReq).toFixed(0)} → ${q((m) => m.cpuUsPerReq).toFixed(0)} |`);
  }
  return lines.join("\n");
}

// ---------------------------------------------------------------- main

const runtimes = values.runtimes!.split(",").map((s) => s.trim()).filter(Boolean) as Runtime[];
const routes = values.routes!.split(",").map((s) => s.trim()).filter(Boolean) as RouteId[];
for (const r of routes) if (!(r in LABEL)) throw new Error(`unknown route ${r}; routes are ${Object.keys(LABEL).join(", ")}`);

// Node runs dist/: built now, so it is never older than the sources.
const built = spawnSync(process.execPath, [join(ROOT, "bin/build.mjs")], { cwd: ROOT, stdio: "inherit" });
if (built.status !== 0) throw new Error("build failed");

const site = await startSite();
const rows: Row[] = [];
const shared: Row[] = [];
try {
  for (const runtime of runtimes) rows.push(...(await runRuntime(runtime, routes, site.url)));
  if (!values["no-pg"]) {
    // The bare app serves a copy of Quarry's document, written by the single-instance rows (none with --runtimes '').
    if (!existsSync(join(work, "openapi.json"))) writeFileSync(join(work, "openapi.json"), "{}");
    const bare = await startBare("node", join(work, "openapi.json"));
    try {
      const pgRoutes = routes.filter((r): r is RouteId => r === "usage" || r === "post");
      const variants = values["pg-variants"]!.split(",").map((s) => s.trim());
      if (variants.includes("pg")) shared.push(...(await runShared("Node, PostgreSQL ×3", false, pgRoutes, site.url, bare)));
      if (variants.includes("redis")) shared.push(...(await runShared("Node, PostgreSQL + Redis ×3", true, pgRoutes, site.url, bare)));
    } finally {
      await stop(bare);
    }
  }
} finally {
  site.server.close();
  rmSync(work, { recursive: true, force: true });
}

console.log(`\n${table(rows)}`);
if (shared.length) console.log(`\n${table(shared)}`);
console.log(`\n${useWrk ? "wrk -t1" : "autocannon"}, ${connections} connections, ${seconds} s per measurement, ${rounds} round(s), medians; node ${process.version}, ${cpus().length} cores; the page server's reads: ${site.hits()}`);
process.exit(0);
