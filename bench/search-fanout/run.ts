/**
 * Fan-out benchmark: /v1/search over simulated engines with heavy-tailed latencies and some
 * failures, against a wait-for-every-engine baseline in the same run, on the same engines.
 *   npx tsx bench/search-fanout/run.ts [--requests 120] [--concurrency 8] [--seed 7]
 * Each simulated engine answers with its real recorded body after a lognormal delay
 * (median 400 ms, sigma 0.9: p99 ≈ 3.3 s); 3 % of calls stall 8–20 s and 3 % answer 500.
 * The baseline asks the same four engines with no timeout, waits for every one, and merges
 * with the same parsers and ranking. Reported: p50/p95 latency of each, and the share of the
 * baseline's returned results that Quarry's answer to the same query also returned.
 */
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createQuarry } from "../../core/app.ts";
import { parseConfig } from "../../core/config.ts";
import { createKey, ensureAccount } from "../../core/keys/service.ts";
import { WEB_BACKENDS } from "../../core/backends/catalogue.ts";
import { mergeResults } from "../../core/ranking/merge.ts";
import type { RawResult } from "../../core/backends/types.ts";
import { memoryPorts } from "../../adapters/shared/bootstrap.ts";
import { rng } from "../../tests/helpers/rng.ts";

const { values } = parseArgs({ options: { requests: { type: "string", default: "120" }, concurrency: { type: "string", default: "8" }, seed: { type: "string", default: "7" } } });
const REQUESTS = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);

// Deterministic randomness, so runs are comparable.
const rand = rng(Number(values.seed));
const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
/** One engine call's fate: a delay and whether it fails. */
function fate(): { delay: number; fail: boolean } {
  const r = rand();
  if (r < 0.03) return { delay: 8_000 + rand() * 12_000, fail: false };
  return { delay: 400 * Math.exp(0.9 * gauss()), fail: r > 0.97 };
}

const FIX = (p: string) => readFileSync(join(new URL("../../tests/fixtures/upstream", import.meta.url).pathname, p), "utf8");
const ENGINES: Record<string, { path: string; type: string; body: string }> = {
  duckduckgo: { path: "/html/", type: "text/html", body: FIX("duckduckgo/html_results_exit_nvim.html") },
  wikipedia: { path: "/w/api.php", type: "application/json", body: FIX("wikipedia/mw_api_generator_search_formatversion2.json") },
  brave: { path: "/res/v1/web/search", type: "application/json", body: FIX("brave/web_search_blue_tack_minimal.json") },
  searxng: { path: "/search", type: "application/json", body: FIX("searxng/search_format_json_synthetic.json") },
};

// The fate of each (query, engine) is drawn once, so Quarry and the baseline meet the same engines.
const fates = new Map<string, { delay: number; fail: boolean }>();
const fateOf = (q: string, id: string) => {
  const k = `${q}|${id}`;
  if (!fates.has(k)) fates.set(k, fate());
  return fates.get(k)!;
};

const sim = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://x");
  const id = Object.keys(ENGINES).find((k) => ENGINES[k].path === url.pathname);
  if (!id) return res.writeHead(404).end();
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    const q = url.searchParams.get("q") ?? url.searchParams.get("gsrsearch") ?? new URLSearchParams(body).get("q") ?? "";
    const f = fateOf(q, id);
    const t = setTimeout(() => {
      if (f.fail) res.writeHead(500).end("engine error");
      else res.writeHead(200, { "content-type": ENGINES[id].type }).end(ENGINES[id].body);
    }, f.delay);
    res.on("close", () => clearTimeout(t));
  });
});
await new Promise<void>((r) => sim.listen(0, "127.0.0.1", () => r()));
const base = `http://127.0.0.1:${(sim.address() as { port: number }).port}`;

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const env = { QUARRY_IP_RATE: "off", QUARRY_PLANS: '{"enterprise":{"per_minute":1000000}}', QUARRY_DUCKDUCKGO_URL: base, QUARRY_WIKIPEDIA_URL: base, QUARRY_BRAVE_URL: base, QUARRY_BRAVE_KEY: "k", QUARRY_SEARXNG_URL: base };
const config = parseConfig(env, "bench");
const ports = memoryPorts(silent);
const { app } = createQuarry(ports, config);
await ensureAccount(ports.keys, "bench", "enterprise", config.plans, Date.now());
const { key } = await createKey(ports.keys, { account: "bench", name: "b", scopes: ["search"] }, Date.now());

async function quarry(q: string): Promise<{ ms: number; urls: string[] }> {
  const t0 = performance.now();
  const res = await app.request("/v1/search", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ query: q, max_results: 10 }) });
  const body = (await res.json()) as { results?: Array<{ url: string }> };
  return { ms: performance.now() - t0, urls: (body.results ?? []).map((r) => r.url) };
}

/** The baseline: every engine, no timeout, wait for all, then the same parse and merge. */
async function baseline(q: string): Promise<{ ms: number; urls: string[] }> {
  const t0 = performance.now();
  const per: Record<string, RawResult[]> = {};
  await Promise.all(
    WEB_BACKENDS.map(async (b) => {
      const reqObj = b.buildRequest({ query: q, maxResults: 20, language: "en", freshness: null }, { baseUrl: base, key: "k" });
      try {
        const r = await fetch(reqObj);
        const out = b.parseResponse({ status: r.status, headers: r.headers, body: await r.text() }, { query: q, maxResults: 20, language: "en", freshness: null });
        if (out.ok) per[b.about.id] = out.results;
      } catch {
        // an engine that errors contributes nothing
      }
    }),
  );
  const merged = mergeResults(per, q, { maxResults: 10 });
  return { ms: performance.now() - t0, urls: merged.map((r) => r.url) };
}

async function runAll(fn: (q: string) => Promise<{ ms: number; urls: string[] }>, queries: string[]) {
  const out: Array<{ ms: number; urls: string[] }> = new Array(queries.length);
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < queries.length) {
      const i = next++;
      out[i] = await fn(queries[i]);
    }
  }));
  return out;
}

const queries = Array.from({ length: REQUESTS }, (_, i) => `query number ${i}`);
const b = await runAll(baseline, queries);
const qy = await runAll(quarry, queries);
const pct = (xs: number[], p: number) => [...xs].sort((a, c) => a - c)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const kept = qy.map((r, i) => {
  const want = new Set(b[i].urls);
  return want.size ? r.urls.filter((u) => want.has(u)).length / want.size : 1;
});
const keptMean = kept.reduce((a, c) => a + c, 0) / kept.length;
const row = (name: string, xs: number[]) => `| ${name} | ${Math.round(pct(xs, 0.5))} | ${Math.round(pct(xs, 0.95))} | ${Math.round(Math.max(...xs))} |`;
console.log(`\n| variant (${REQUESTS} requests, ${CONCURRENCY} at a time) | p50 ms | p95 ms | max ms |`);
console.log("|---|---:|---:|---:|");
console.log(row("wait for every engine (baseline)", b.map((r) => r.ms)));
console.log(row("Quarry /v1/search (basic tier)", qy.map((r) => r.ms)));
console.log(`\np95 ratio Quarry/baseline: ${(pct(qy.map((r) => r.ms), 0.95) / pct(b.map((r) => r.ms), 0.95)).toFixed(2)} (target ≤ 0.5); baseline results kept: ${(keptMean * 100).toFixed(1)} % (target ≥ 90 %)`);
console.log(`node ${process.version}, seed ${values.seed}`);
sim.closeAllConnections();
sim.close();
process.exit(0);
