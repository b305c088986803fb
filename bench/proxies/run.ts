/**
 * What getting past a bot wall costs (issue #32), in one run, as ratios against baselines measured
 * in the same run: a read that escalates once (static → blocked → proxy) against one that does not,
 * a read that starts at the host's remembered proxy step, and a fetch through a proxy against the
 * same fetch direct. Real parts on loopback: the guarded Node fetcher, a real forward proxy
 * (tests/helpers/forward-proxy.ts) connecting out from 127.0.0.3, and a site that walls 127.0.0.1
 * with a Cloudflare challenge. No browser (its step is skipped, as on a server without Chromium).
 *
 * `npx tsx bench/proxies/run.ts [--reads 200] [--rounds 5]`
 */
import { readFileSync } from "node:fs";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { parseProxies, ProxyPool } from "../../core/net/proxy-pool.ts";
import { readEscalating } from "../../core/pages/escalate.ts";
import type { HostMemory, HostStep, Ports } from "../../core/ports.ts";
import { startHttpProxy, startWalledSite } from "../../tests/helpers/forward-proxy.ts";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const READS = arg("reads", 200);
const ROUNDS = arg("rounds", 5);

const page = `<!doctype html><html><head><title>Bench</title></head><body><article><h1>Bench</h1><p>${"A page of ordinary size for the benchmark. ".repeat(200)}</p></article></body></html>`;
const challenge = readFileSync(new URL("../../tests/fixtures/blocks/cloudflare-challenge.html", import.meta.url), "utf8");
const open = await startWalledSite({ "/": page }, { status: 200, body: page });
const walled = await startWalledSite({ "/": page }, { status: 403, body: challenge });
const proxy = await startHttpProxy();
const proxies = new ProxyPool(parseProxies(proxy.url));
const pages = createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]), proxies });

const forgetful: HostMemory = { get: async () => null, set: async () => {} };
const remembering = (): HostMemory => {
  const m = new Map<string, HostStep>();
  return { get: async (h) => m.get(h) ?? null, set: async (h, step) => void m.set(h, { step, until: Infinity }) };
};
const noBrowser = { render: async () => { throw new Error("none"); }, health: () => ({ status: "disabled" as const, pages_in_use: 0, max_pages: 0 }) };
const portsWith = (hosts: HostMemory) => ({ pages, proxies, hosts, render: noBrowser }) as unknown as Ports;
const ask = (url: string) => ({ url, formats: ["markdown"] });

const variants: Record<string, () => Promise<unknown>> = {
  "direct fetch (baseline for the proxy)": () => pages.fetchPage(`${open.url}/`),
  "fetch through the proxy": () => pages.fetchPage(`${open.url}/`, { proxy: {} }),
  "read that does not escalate (baseline for escalation)": () => readEscalating(portsWith(forgetful), ask(`${open.url}/`), 15_000, false),
  "read that escalates once (static 403 challenge → proxy)": () => readEscalating(portsWith(forgetful), ask(`${walled.url}/`), 15_000, false),
};
const remembered = portsWith(remembering());
await readEscalating(remembered, ask(`${walled.url}/`), 15_000, false);
variants["read starting at the remembered proxy step"] = () => readEscalating(remembered, ask(`${walled.url}/`), 15_000, false);

const samples: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
for (const fn of Object.values(variants)) for (let i = 0; i < 20; i++) await fn(); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  const names = Object.keys(variants);
  // Who goes first rotates each round.
  for (const name of [...names.slice(r % names.length), ...names.slice(0, r % names.length)]) {
    const t0 = performance.now();
    for (let i = 0; i < READS; i++) await variants[name]!();
    samples[name]!.push(((performance.now() - t0) / READS) * 1000);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
const direct = m["direct fetch (baseline for the proxy)"]!;
const plain = m["read that does not escalate (baseline for escalation)"]!;
console.log(`reads per round ${READS}, rounds ${ROUNDS}, medians (µs per read)`);
console.log("| variant | µs per read | × baseline |\n|---|---:|---:|");
for (const [k, v] of Object.entries(m)) {
  const base = k.includes("proxy") && k.startsWith("fetch") || k.startsWith("direct") ? direct : plain;
  console.log(`| ${k} | ${Math.round(v)} | ${(v / base).toFixed(2)} |`);
}
await Promise.all([open.close(), walled.close(), proxy.kill()]);
