/**
 * A real HTTP server with the dashboard mounted, built the way adapters/node/server.ts builds one
 * (config → buildPorts on a SQLite data dir → createQuarry → @hono/node-server), until core/app.ts
 * mounts the dashboard itself. It also mounts the test-only metered echo operation
 * (POST /v1/test/echo, group "search") so usage can be seen to move.
 *
 * Run by hand: `QUARRY_DATA_DIR=/tmp/d npx tsx tests/dashboard/serve-with-dashboard.ts`
 */
import { serve } from "@hono/node-server";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createQuarry } from "../../core/app.ts";
import { parseConfig, type Env } from "../../core/config.ts";
import { buildPorts } from "../../adapters/shared/bootstrap.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { onCleanup } from "../helpers/temp.ts";
import { echoOperation } from "../helpers/test-operation.ts";

export interface DashboardServer {
  url: string;
  /** Environment for the CLI (`createKeyCli`): the same data dir as the server. */
  env: Record<string, string>;
  logger: MemoryLogger;
  stop(): Promise<void>;
}

export async function startDashboardServer(extraEnv: Env = {}): Promise<DashboardServer> {
  const ownDir = !extraEnv.QUARRY_DATA_DIR;
  const dataDir = extraEnv.QUARRY_DATA_DIR ?? mkdtempSync(join(tmpdir(), "quarry-dashboard-"));
  // Also removed if the suite fails before stop() (tests/helpers/temp.ts).
  if (ownDir) onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = { QUARRY_DATA_DIR: dataDir, QUARRY_LOG_LEVEL: "warn" };
  const config = parseConfig({ ...env, ...extraEnv, QUARRY_HOST: "127.0.0.1", QUARRY_PORT: "0" }, "0.0.0-test");
  const logger = new MemoryLogger();
  const built = await buildPorts(config, nodeRuntime, logger);
  const quarry = createQuarry(built.ports, config, { operations: () => echoOperation() });
  // Routes are added after createQuarry's notFound/onError: both are fallbacks, not routes, so
  // this works as long as it happens before the first request builds the router.

  const server = serve({ fetch: quarry.app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    env,
    logger,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      await quarry.drain();
      await built.close();
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const s = await startDashboardServer(process.env.QUARRY_DATA_DIR ? { QUARRY_DATA_DIR: process.env.QUARRY_DATA_DIR } : {});
  console.log(`dashboard: ${s.url}/dashboard   data: ${s.env.QUARRY_DATA_DIR}`);
  process.once("SIGINT", () => s.stop().then(() => process.exit(0)));
}
