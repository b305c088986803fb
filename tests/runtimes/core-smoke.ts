/**
 * Runs the core in process on whichever runtime executes this file (Node, Deno or Bun):
 * createApp over memory ports, a key, the gateway's main paths. Exits 1 on the first failure.
 * Run by tests/runtimes/core-on-runtimes.test.ts under Deno and Bun.
 */
import { createQuarry } from "../../core/app.ts";
import { parseConfig } from "../../core/config.ts";
import { createKey, ensureAccount } from "../../core/keys/service.ts";
import { memoryPorts } from "../../adapters/shared/bootstrap.ts";

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const ports = memoryPorts(silent);
const config = parseConfig({ QUARRY_IP_RATE: "off", QUARRY_PLANS: '{"free":{"per_minute":3}}' }, "smoke");
const { app } = createQuarry(ports, config);
await ensureAccount(ports.keys, "acme", undefined, config.plans, Date.now());
const { key } = await createKey(ports.keys, { account: "acme", name: "smoke", scopes: ["keys", "search"] }, Date.now());
const auth = { authorization: `Bearer ${key}` };

const checks: Array<[string, boolean]> = [];
const health = await app.request("/health");
checks.push(["health 200", health.status === 200]);
checks.push(["request id", /^req_[0-9A-Z]{26}$/.test(health.headers.get("x-request-id") ?? "")]);
checks.push(["usage 200", (await app.request("/v1/usage", { headers: auth })).status === 200]);
checks.push(["keys 200", (await app.request("/v1/keys", { headers: auth })).status === 200]);
checks.push(["3rd in a minute is 200", (await app.request("/v1/usage", { headers: auth })).status === 200]);
const limited = await app.request("/v1/usage", { headers: auth });
checks.push(["4th in a minute is 429 with Retry-After", limited.status === 429 && Number(limited.headers.get("retry-after")) >= 1]);
checks.push(["missing auth 401", (await app.request("/v1/usage")).status === 401]);
checks.push(["unknown path 404", (await app.request("/nope")).status === 404]);
const failed = checks.filter(([, ok]) => !ok).map(([name]) => name);
console.log(JSON.stringify({ passed: checks.length - failed.length, failed }));
if (failed.length) throw new Error(`failed: ${failed.join(", ")}`);
