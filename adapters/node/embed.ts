/**
 * `quarry/node`: what a Node service needs to embed Quarry with its own server — the ports for
 * the configured storage (SQLite by default, PostgreSQL, Redis, or memory), next to `createApp`
 * from `quarry/core`. See README "Embedding the core".
 */
import type { Config } from "../../core/config.ts";
import type { Logger } from "../../core/ports.ts";
import { buildPorts, memoryPorts, type Built } from "../shared/bootstrap.ts";
import { createLogger } from "../shared/logger.ts";
import { nodeRuntime } from "./server.ts";

export { memoryPorts, type Built };
export { createLogger };

/** The ports for `config` on Node: storage, counters, cache, guarded page fetches, the browser. Call `close()` when done. */
export function openPorts(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<Built> {
  return buildPorts(config, nodeRuntime, logger);
}
