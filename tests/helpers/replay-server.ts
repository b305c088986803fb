/**
 * The replay server of the upstreams (adapters/node/replay.ts, the one `quarry demo` serves),
 * and the environment that points the web search backends at it.
 */
import { startReplayServer, type ReplayServer } from "../../adapters/node/replay.ts";
import { createKeyCli, startServer, tempDataDir, type Server } from "./server.ts";

export { RECORDED, startReplayServer, type Fault, type ReplayServer } from "../../adapters/node/replay.ts";

export function replayEnv(url: string): Record<string, string> {
  return {
    QUARRY_DUCKDUCKGO_URL: `${url}/duckduckgo`,
    QUARRY_WIKIPEDIA_URL: `${url}/wikipedia`,
    QUARRY_BRAVE_URL: `${url}/brave`,
    QUARRY_BRAVE_KEY: "test-key",
    QUARRY_SEARXNG_URL: `${url}/searxng`,
  };
}

/** A real `quarry serve` whose upstreams are this replay server (plus `env`), and an enterprise key with `scopes` (comma-separated). */
export async function startReplayedQuarry(scopes: string, env: Record<string, string> = {}): Promise<{ server: Server; replay: ReplayServer; key: string; close(): Promise<void> }> {
  const replay = await startReplayServer();
  const dataDir = tempDataDir();
  const server = await startServer("node", { QUARRY_DATA_DIR: dataDir, QUARRY_IP_RATE: "off", ...replay.env(), ...env });
  const key = createKeyCli({ QUARRY_DATA_DIR: dataDir }, "acme", scopes, "enterprise").key;
  return {
    server,
    replay,
    key,
    close: async () => {
      await server.stop();
      await replay.close();
    },
  };
}
