/**
 * Start-up shared by the Node, Deno and Bun servers: configuration, logger, storage, the app,
 * and an orderly stop (stop accepting → finish in-flight requests → flush → close storage).
 */
import { accessSync, constants, statSync } from "node:fs";
import { createQuarry, type Quarry } from "../../core/app.ts";
import { ConfigError, parseConfig, type Config, type Env } from "../../core/config.ts";
import type { Logger } from "../../core/ports.ts";
import { buildPorts, StorageOpenError, type Built, type RuntimeParts } from "./bootstrap.ts";
import { DataDirError, makeDataDir } from "./data-dir.ts";
import { createStdoutLogger } from "./logger.ts";
import { parseServerLimits, type ServerLimits } from "./server-limits.ts";
import { lockServer, ServerLockedError, type ServerLock } from "./server-lock.ts";

export { packageVersion } from "./version.ts";
import { packageVersion } from "./version.ts";

export interface Prepared {
  config: Config;
  limits: ServerLimits;
  logger: Logger;
  /** Waits a bounded time for log lines to reach stdout. */
  flushLogs(ms?: number): Promise<void>;
  /** Held while this server owns the SQLite file (null for PostgreSQL and memory). */
  lock: ServerLock | null;
  built: Built;
  quarry: Quarry;
}

/** Reads the configuration; a bad value stops start-up with a message naming the variable. */
export function loadConfig(env: Env): Config {
  return configOrExit(() => parseConfig(env, packageVersion()));
}

function configOrExit<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw configFailure(err);
  }
}

/** A bad configuration value as one line on stderr naming the variable; other errors pass through. */
function configFailure(err: unknown): unknown {
  return err instanceof ConfigError ? startupFailure(`invalid configuration: ${err.message}`) : err;
}

export class StartupError extends Error {}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Stops start-up with one line on stderr (the caller exits non-zero). */
export function startupFailure(message: string): StartupError {
  console.error(`quarry: ${message}`);
  return new StartupError(message);
}

export async function prepare(env: Env, runtime: RuntimeParts): Promise<Prepared> {
  const config = loadConfig(env);
  const limits = configOrExit(() => parseServerLimits(env));
  // A browser path that is not there would only show as "install Chromium" on the first render.
  if (config.browser.path && !isExecutable(config.browser.path)) {
    throw startupFailure(`invalid configuration: QUARRY_CHROMIUM_PATH: "${config.browser.path}" is not an executable file (unset it to use the usual places)`);
  }
  const { logger, flush } = createStdoutLogger(config.logLevel);
  const usesSqlite = !config.databaseUrl && config.dataDir !== ":memory:";
  let lock: ServerLock | null = null;
  if (usesSqlite) {
    try {
      makeDataDir(config.dataDir);
    } catch (err) {
      throw storageFailure(err);
    }
    try {
      lock = await lockServer(config.dataDir, runtime.sqlite);
    } catch (err) {
      if (err instanceof ServerLockedError) throw startupFailure(err.message);
      throw err;
    }
  }
  try {
    const built = await buildPorts(config, runtime, logger);
    const quarry = createQuarry(built.ports, config);
    return { config, limits, logger, flushLogs: flush, lock, built, quarry };
  } catch (err) {
    await lock?.release();
    throw storageFailure(err);
  }
}

/**
 * Start-up errors an operator can act on, as one line on stderr on every runtime (Deno and Bun
 * print a stack trace for anything else): a bad value, a data directory that cannot be made, a
 * database that cannot be opened. Other errors pass through.
 */
function storageFailure(err: unknown): unknown {
  if (err instanceof DataDirError || err instanceof StorageOpenError) return startupFailure(err.message);
  return configFailure(err);
}

/** A listen() failure as one line an operator can act on; other errors pass through. */
export function listenFailure(err: unknown, host: string, port: number): unknown {
  const code = (err as { code?: string } | null)?.code ?? (err as Error | null)?.name;
  const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  if (code === "EADDRINUSE" || code === "AddrInUse") {
    return startupFailure(`cannot listen on ${where}: the address is already in use (is another server running? set QUARRY_PORT or --port)`);
  }
  if (code === "EACCES" || code === "PermissionDenied") {
    return startupFailure(`cannot listen on ${where}: permission denied (ports below 1024 need privileges; set QUARRY_PORT or --port)`);
  }
  if (code === "EADDRNOTAVAIL" || code === "AddrNotAvailable" || code === "ENOTFOUND") {
    return startupFailure(`cannot listen on ${where}: no such address on this machine (set QUARRY_HOST or --host)`);
  }
  return err;
}

/** Releases what prepare() took when the server never started listening. */
export async function abandon(p: Prepared): Promise<void> {
  await p.quarry.stop();
  await p.quarry.drain();
  await p.built.close();
  await p.lock?.release();
  await p.flushLogs(500);
}

export async function announce(p: Prepared, url: string, runtimeName: string): Promise<void> {
  p.lock?.listening(url);
  // The pid is the process to signal: a launcher such as npx runs the server through a shell
  // that does not pass SIGTERM on (README, "Run it").
  p.logger.info({ url, pid: process.pid, runtime: runtimeName, storage: p.built.describe, version: p.config.version }, "quarry listening");
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
  p.quarry.closing();
  const timer = setTimeout(() => {
    // Named here, since a request cut off never gets its own log line.
    const cut = p.quarry.inFlight();
    p.logger.warn({ requests: cut.length, cut: cut.slice(0, 20) }, "in-flight requests did not finish within 10 s; stopping anyway");
  }, 10_000);
  await Promise.race([stopServer(), new Promise((r) => setTimeout(r, 10_000))]);
  clearTimeout(timer);
  await p.quarry.stop();
  await p.quarry.drain();
  await p.built.close();
  await p.lock?.release();
  p.logger.info({}, "quarry stopped");
  // Bounded: a reader that went away (closed pipe) or stalled must not keep the process alive.
  await p.flushLogs(1000);
}
