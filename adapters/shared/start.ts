/**
 * Start-up shared by the Node, Deno and Bun servers: configuration, logger, storage, the app,
 * and an orderly stop (stop accepting → finish in-flight requests → flush → close storage).
 */
import { createQuarry, type Quarry } from "../../core/app.ts";
import { ConfigError, parseConfig, type Config, type Env } from "../../core/config.ts";
import type { Logger } from "../../core/ports.ts";
import { buildPorts, type Built, type RuntimeParts } from "./bootstrap.ts";
import { createLogger } from "./logger.ts";

export { packageVersion } from "./version.ts";
import { packageVersion } from "./version.ts";

export interface Prepared {
  config: Config;
  logger: Logger;
  built: Built;
  quarry: Quarry;
}

/** Reads the configuration; a bad value stops start-up with a message naming the variable. */
export function loadConfig(env: Env): Config {
  try {
    return parseConfig(env, packageVersion());
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`quarry: invalid configuration: ${err.message}`);
      throw new StartupError(err.message);
    }
    throw err;
  }
}

export class StartupError extends Error {}

export async function prepare(env: Env, runtime: RuntimeParts): Promise<Prepared> {
  const config = loadConfig(env);
  const logger = createLogger(config.logLevel);
  const built = await buildPorts(config, runtime, logger);
  const quarry = createQuarry(built.ports, config);
  return { config, logger, built, quarry };
}

export async function announce(p: Prepared, url: string, runtimeName: string): Promise<void> {
  p.logger.info({ url, runtime: runtimeName, storage: p.built.describe, version: p.config.version }, "quarry listening");
  if (await p.built.ports.keys.isEmpty().catch(() => false)) {
    p.logger.info(
      { next: "npx quarry keys create --account me --scopes search,research,scrape,keys --name first" },
      "no API keys yet: create the first one with the command in 'next' (its secret is printed once)",
    );
  }
}

/** Runs `stopServer` (which must stop accepting and resolve once in-flight requests are done), then flushes. */
export async function shutdown(p: Prepared, stopServer: () => Promise<void>, signal: string): Promise<void> {
  p.logger.info({ signal }, "quarry stopping: finishing in-flight requests");
  const timer = setTimeout(() => {
    p.logger.warn({}, "in-flight requests did not finish within 10 s; stopping anyway");
  }, 10_000);
  await Promise.race([stopServer(), new Promise((r) => setTimeout(r, 10_000))]);
  clearTimeout(timer);
  await p.quarry.drain();
  await p.built.close();
  p.logger.info({}, "quarry stopped");
}
