/**
 * What the translation layers cost: the same key, in process (memory storage), sequential
 * requests, rounds alternating the variants. The native usage read against the Tavily usage read
 * (one internal dispatch and a reshaped body) and against MCP tools/list (an MCP server and
 * transport made for the request, as the stateless mode does) and an MCP tools/call whose native
 * request is refused by scope (the whole path without an operation's own work).
 *   npx tsx bench/compat/run.ts [--requests 2000] [--rounds 3]
 */
import { parseArgs } from "node:util";
import { createQuarry } from "../../core/app.ts";
import { parseConfig } from "../../core/config.ts";
import { createKey, ensureAccount } from "../../core/keys/service.ts";
import { memoryPorts } from "../../adapters/shared/bootstrap.ts";
import { createLogger } from "../../adapters/shared/logger.ts";

const { values } = parseArgs({ options: { requests: { type: "string", default: "2000" }, rounds: { type: "string", default: "3" } } });
const N = Number(values.requests);
const ROUNDS = Number(values.rounds);

const config = parseConfig({ QUARRY_IP_RATE: "off", QUARRY_PLANS: '{"free":{"quota":null,"per_minute":100000000}}' }, "bench");
const ports = memoryPorts(createLogger("silent"));
const quarry = createQuarry(ports, config);
await ensureAccount(ports.keys, "bench", "free", config.plans, Date.now());
const { key } = await createKey(ports.keys, { account: "bench", name: "bench", scopes: ["search"] }, Date.now());
const auth = { authorization: `Bearer ${key}` };
const mcpHeaders = { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };

const VARIANTS: Array<[string, () => Response | Promise<Response>]> = [
  ["native GET /v1/usage (baseline)", () => quarry.app.request("/v1/usage", { headers: auth })],
  ["Tavily GET /compat/tavily/usage", () => quarry.app.request("/compat/tavily/usage", { headers: auth })],
  ["MCP tools/list (POST /mcp)", () => quarry.app.request("/mcp", { method: "POST", headers: mcpHeaders, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) })],
  ["MCP tools/call scrape, refused by scope", () => quarry.app.request("/mcp", { method: "POST", headers: mcpHeaders, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "scrape", arguments: { url: "https://example.org/" } } }) })],
];

const times = new Map<string, number[]>(VARIANTS.map(([name]) => [name, []]));
for (const [, run] of VARIANTS) for (let i = 0; i < 200; i++) await (await run()).text(); // warm up (the MCP SDK loads on first use)
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of VARIANTS) {
    const t0 = performance.now();
    for (let i = 0; i < N; i++) {
      const res = await run();
      if (res.status !== 200) throw new Error(`${name}: ${res.status} ${await res.text()}`);
      await res.text();
    }
    times.get(name)!.push(((performance.now() - t0) * 1000) / N);
  }
}
const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = median(times.get(VARIANTS[0]![0])!);
console.log(`| variant | µs per request (median of ${ROUNDS} rounds × ${N}) | × baseline |`);
console.log("|---|---|---|");
for (const [name] of VARIANTS) {
  const m = median(times.get(name)!);
  console.log(`| ${name} | ${m.toFixed(0)} | ${(m / base).toFixed(2)} |`);
}
await quarry.drain();
