/**
 * The gateway's cost without a server (issue #33): µs per request of `app.fetch` on Quarry's
 * app as `quarry serve` prepares it (SQLite default, logging at info to stdout) against a bare
 * Hono route, in one process, 50 requests at a time. No sockets, so it isolates the JavaScript a
 * request costs on each runtime; it is a probe for profiling work, not the benchmark of record
 * (that is run.ts).
 *
 * Routes: usage, keys, health, post (a cached, metered POST /v1/scrape of a local page, against
 * a bare POST that parses the body and echoes its URL, as bench/footprint/bare.mjs does), or a path.
 *
 *   deno run -A bench/gateway/inproc.ts [route] [requests] >/dev/null
 *   bun bench/gateway/inproc.ts [route] [requests] >/dev/null
 *   npx tsx bench/gateway/inproc.ts [route] [requests] >/dev/null
 *
 * Results go to stderr; stdout is the server's log.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Hono } from "hono";
import type { Connector } from "db0";
import { prepare } from "../../adapters/shared/start.ts";
import type { RuntimeParts } from "../../adapters/shared/bootstrap.ts";
import { cachedStatements } from "../../adapters/shared/statement-cache.ts";
import { createKey, ensureAccount } from "../../core/keys/service.ts";

const g = globalThis as { Deno?: { args: string[] }; Bun?: unknown };
const runtime = g.Deno ? "deno" : g.Bun ? "bun" : "node";
const argv = g.Deno ? g.Deno.args : process.argv.slice(2);
const route = argv[0] ?? "usage";
const total = Number(argv[1] ?? 100_000);

let parts: RuntimeParts;
if (runtime === "node") parts = (await import("../../adapters/node/server.ts")).nodeRuntime;
else {
  const mod = runtime === "deno" ? await import("db0/connectors/node-sqlite") : await import("db0/connectors/bun-sqlite");
  const connector = mod.default as (opts: { path: string }) => Connector;
  parts = { sqlite: (opts) => cachedStatements(connector(opts)) };
}

// The page the POST scrapes (read once, then answered from the cache), as in run.ts.
const PAGE = `<!doctype html><html lang="en"><head><title>Bench article</title></head><body><nav>Home · About</nav><article><h1>Bench article</h1>${
  "<p>A paragraph of the page the benchmark scrapes, long enough to be read as the page's content rather than its chrome.</p>".repeat(6)
}</article><footer>Footer</footer></body></html>`;
const site = route === "post" ? createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE)) : null;
if (site) await new Promise<void>((r) => site.listen(0, "127.0.0.1", () => r()));
const pageUrl = site ? `http://127.0.0.1:${(site.address() as { port: number }).port}/article` : "";

const dir = mkdtempSync(join(tmpdir(), "quarry-inproc-"));
const env = {
  QUARRY_DATA_DIR: dir, QUARRY_IP_RATE: "off", QUARRY_LOG_LEVEL: process.env.INPROC_LOG ?? "info", QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
  QUARRY_PLANS: '{"enterprise":{"per_minute":1000000000}}',
};
const p = await prepare(env, parts);
await ensureAccount(p.built.ports.keys, "bench", "enterprise", p.config.plans, Date.now());
const secret = (await createKey(p.built.ports.keys, { account: "bench", name: "bench", scopes: ["search", "scrape", "keys"] }, Date.now())).key;

const bare = new Hono();
bare.get("/health", (c) => c.json({ status: "ok" }));
bare.post("/v1/scrape", async (c) => c.json({ url: ((await c.req.json()) as { url: string }).url }));

const path = route === "usage" ? "/v1/usage" : route === "keys" ? "/v1/keys" : route === "health" ? "/health" : route === "post" ? "/v1/scrape" : route;
const headers: Record<string, string> = route === "health" ? {} : { authorization: `Bearer ${secret}` };
const body = route === "post" ? JSON.stringify({ url: pageUrl, formats: ["text"] }) : undefined;
if (body) Object.assign(headers, { "content-type": "application/json", "content-length": String(new TextEncoder().encode(body).byteLength) });
const barePath = route === "post" ? "/v1/scrape" : "/health";

async function run(fetch: (r: Request) => Response | Promise<Response>, url: string, n: number): Promise<number> {
  const t0 = performance.now();
  for (let done = 0; done < n; done += 50) {
    await Promise.all(Array.from({ length: 50 }, async () => {
      const res = await fetch(new Request(url, body ? { method: "POST", headers, body } : { headers }));
      if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
      await res.text();
    }));
  }
  return ((performance.now() - t0) * 1000) / n;
}

const quarryFetch = (r: Request) => p.quarry.app.fetch(r);
const bareFetch = (r: Request) => bare.fetch(r);
await run(quarryFetch, `http://127.0.0.1${path}`, 5_000);
await run(bareFetch, `http://127.0.0.1${barePath}`, 5_000);
// INPROC_PROFILE=file: a CPU profile of the measured rounds (node:inspector, on Node and Deno; on Bun use bun --cpu-prof).
const profileTo = process.env.INPROC_PROFILE;
let session: import("node:inspector").Session | null = null;
const post = (m: string, params: object = {}) => new Promise<unknown>((res, rej) => session!.post(m, params, (e, r) => (e ? rej(e) : res(r))));
if (profileTo) {
  const { Session } = await import("node:inspector");
  session = new Session();
  session.connect();
  await post("Profiler.enable");
  await post("Profiler.setSamplingInterval", { interval: 200 });
  await post("Profiler.start");
}
const rows: string[] = [];
for (let round = 0; round < 3; round++) {
  const b = await run(bareFetch, `http://127.0.0.1${barePath}`, total / 3);
  const q = await run(quarryFetch, `http://127.0.0.1${path}`, total / 3);
  rows.push(`${runtime} ${path}: bare ${b.toFixed(1)} µs, Quarry ${q.toFixed(1)} µs, ratio ${(b / q).toFixed(2)}`);
}
if (session) {
  const { profile } = (await post("Profiler.stop")) as { profile: unknown };
  writeFileSync(profileTo!, JSON.stringify(profile));
}
console.error(rows.join("\n"));
await p.quarry.stop();
await p.built.close();
await p.lock?.release();
rmSync(dir, { recursive: true, force: true });
await p.flushLogs(200);
site?.close();
process.exit(0);
