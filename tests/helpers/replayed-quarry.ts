/** A real `quarry serve` process on the replayed upstreams (kept apart so that importing the replay server starts no process kind of test). */
import { startReplayServer, type ReplayServer } from "../../adapters/node/replay.ts";
import { createKeyCli, startServer, tempDataDir, type Server } from "./server.ts";

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
