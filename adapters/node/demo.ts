/**
 * `quarry demo`: the whole service without internet, for a first look. Every upstream (the web
 * engines, YouTube, Hacker News, Stack Exchange, GitHub, Lemmy) is replayed from the recordings in
 * tests/fixtures/upstream/ by a local server; Quarry runs on a throwaway SQLite file with one key,
 * printed once. Every query gets the recorded answers (e.g. a search for "blue tack"), so what you
 * see is the real shape and behaviour of each operation, not live results.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../../core/config.ts";
import { createKey, ensureAccount } from "../../core/keys/service.ts";
import { buildPorts } from "../shared/bootstrap.ts";
import { createLogger } from "../shared/logger.ts";
import { startReplayServer } from "./replay.ts";
import { nodeRuntime, startNodeServer } from "./server.ts";

export async function startDemo(env: Record<string, string | undefined> = process.env): Promise<{ url: string; key: string; stop: () => Promise<void> }> {
  const replay = await startReplayServer();
  const dataDir = mkdtempSync(join(tmpdir(), "quarry-demo-"));
  const cleanup = () => rmSync(dataDir, { recursive: true, force: true });
  const demoEnv = { ...env, ...replay.env(), QUARRY_DATA_DIR: dataDir, QUARRY_PORT: env.QUARRY_PORT ?? "8080", QUARRY_LOG_LEVEL: env.QUARRY_LOG_LEVEL ?? "warn" };
  let key: string;
  let server: Awaited<ReturnType<typeof startNodeServer>>;
  try {
    const config = parseConfig(demoEnv);
    const built = await buildPorts(config, nodeRuntime, createLogger("silent"));
    await ensureAccount(built.ports.keys, "demo", "pro", config.plans, Date.now());
    ({ key } = await createKey(built.ports.keys, { account: "demo", name: "demo", scopes: ["search", "research", "scrape", "keys"] }, Date.now()));
    await built.close();
    server = await startNodeServer(demoEnv);
  } catch (err) {
    // A taken port or a bad variable: the replay server would keep the process alive, and
    // the throwaway data would stay behind.
    await replay.close();
    cleanup();
    throw err;
  }
  process.once("exit", cleanup);
  process.stdout.write(`Quarry demo at ${server.url}: every upstream is replayed from recordings, nothing leaves this machine.
Key (plan pro, all scopes; this demo's data is deleted when it stops):

  export QUARRY_KEY=${key}

  curl -s ${server.url}/v1/search -H "Authorization: Bearer $QUARRY_KEY" -H 'Content-Type: application/json' -d '{"query":"blue tack"}'
  curl -s ${server.url}/v1/video/search -H "Authorization: Bearer $QUARRY_KEY" -H 'Content-Type: application/json' -d '{"query":"test video"}'
  curl -s ${server.url}/v1/social/research -H "Authorization: Bearer $QUARRY_KEY" -H 'Content-Type: application/json' -d '{"query":"apple"}'
  curl -s ${server.url}/v1/research -H "Authorization: Bearer $QUARRY_KEY" -H 'Content-Type: application/json' -d '{"query":"blue tack","tier":"basic"}'

  Dashboard: ${server.url}/dashboard   API reference: ${server.url}/docs   Stop: Ctrl-C
`);
  return {
    url: server.url,
    key,
    stop: async () => {
      await server.stop();
      await replay.close();
      cleanup();
    },
  };
}
