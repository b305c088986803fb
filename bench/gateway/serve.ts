/**
 * A server for the gateway benchmark. MODE=bare: a plain Hono JSON route on @hono/node-server.
 * MODE=quarry: Quarry's app with its real storage (STORAGE=sqlite|memory, or BENCH_DATABASE_URL
 * and BENCH_REDIS_URL for PostgreSQL / PostgreSQL + Redis) and one metered
 * operation mounted through the public extension point, so every request is authenticated,
 * scope-checked, body-validated, admitted against the per-minute window and metered.
 * Prints `READY <url> <secret>`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import * as v from "valibot";
import { createQuarry } from "../../core/app.ts";
import { parseConfig } from "../../core/config.ts";
import { createKey, ensureAccount } from "../../core/keys/service.ts";
import type { RouteDef } from "../../core/gateway/route.ts";
import { buildPorts } from "../../adapters/shared/bootstrap.ts";
import { createLogger } from "../../adapters/shared/logger.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";

const mode = process.env.MODE ?? "quarry";
let fetchHandler: (req: Request, env?: unknown) => Response | Promise<Response>;
let secret = "-";

if (mode === "bare") {
  const app = new Hono();
  app.post("/v1/bench", async (c) => c.json({ query: (await c.req.json()).query }));
  fetchHandler = app.fetch;
} else {
  const config = parseConfig({
    QUARRY_DATA_DIR: process.env.STORAGE === "memory" ? ":memory:" : mkdtempSync(join(tmpdir(), "quarry-bench-")),
    QUARRY_DATABASE_URL: process.env.BENCH_DATABASE_URL,
    QUARRY_REDIS_URL: process.env.BENCH_REDIS_URL,
    QUARRY_IP_RATE: "off",
    // An unlimited quota with a per-minute limit far above what the run can reach: every request is admitted and counted.
    QUARRY_PLANS: '{"bench":{"quota":null,"per_minute":1000000000}}',
    QUARRY_LOG_LEVEL: "silent",
  });
  const built = await buildPorts(config, nodeRuntime, createLogger("silent"));
  const metered: RouteDef = {
    method: "POST", path: "/v1/bench", summary: "bench", auth: true, scope: "search", group: "search",
    body: v.strictObject({ query: v.string() }), status: 200, response: v.object({ query: v.string() }), errors: [],
    handler: (c) => c.json({ query: (c.get("body") as { query: string }).query }),
  };
  const quarry = createQuarry(built.ports, config, { operations: () => [metered] });
  // Further instances of a shared database reuse the first one's key.
  if (process.env.BENCH_SECRET) secret = process.env.BENCH_SECRET;
  else {
    await ensureAccount(built.ports.keys, "bench", "bench", config.plans, Date.now());
    secret = (await createKey(built.ports.keys, { account: "bench", name: "bench", scopes: ["search"] }, Date.now())).key;
  }
  fetchHandler = quarry.app.fetch;
}

const server = serve({ fetch: fetchHandler, hostname: "127.0.0.1", port: 0 });
server.once("listening", () => {
  const addr = server.address() as { port: number };
  console.log(`READY http://127.0.0.1:${addr.port} ${secret}`);
});

// For profiling (node --cpu-prof): exit cleanly after BENCH_EXIT_AFTER_MS so the profile is written.
if (process.env.BENCH_EXIT_AFTER_MS) setTimeout(() => process.exit(0), Number(process.env.BENCH_EXIT_AFTER_MS));
