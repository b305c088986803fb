/**
 * Builds the ports from the configuration. Every runtime adapter and the CLI start here,
 * so they share one storage layout: SQLite in QUARRY_DATA_DIR by default (issue 3 adds
 * PostgreSQL and Redis), or memory for tests and ephemeral runs.
 */
import { createStorage, type Storage } from "unstorage";
import dbDriver from "unstorage/drivers/db0";
import memoryDriver from "unstorage/drivers/memory";
import { ConfigError, type Config } from "../../core/config.ts";
import type { Clock, Logger, Ports } from "../../core/ports.ts";
import { KvKeyStore } from "../storage/kv-key-store.ts";
import { KvSources } from "../storage/kv-sources.ts";
import { LruCache } from "../storage/lru-cache.ts";
import { MemoryCounters } from "../storage/memory-counters.ts";
import { SqliteCounters } from "../storage/sqlite-counters.ts";
import { PgCounters } from "../storage/pg-counters.ts";
import { openPostgres } from "../storage/postgres.ts";
import { openRedis } from "../storage/redis.ts";
import { RedisCache } from "../storage/redis-cache.ts";
import { RedisCounters } from "../storage/redis-counters.ts";
import { openSqlite, type SqliteConnectorFactory } from "./sqlite.ts";

export const KV_TABLE = "quarry_kv";
export const systemClock: Clock = { now: () => Date.now() };

// We create the table ourselves (migrations) before the driver would; its notice is noise.
(globalThis as Record<string, unknown>).__unstorage_db0_experimental_warning__ = true;

export interface RuntimeParts {
  sqlite: SqliteConnectorFactory;
  remoteAddress?: Ports["remoteAddress"];
}

export interface Built {
  ports: Ports;
  /** Where the data lives, for start-up messages. */
  describe: string;
  close(): Promise<void>;
}

export function memoryPorts(logger: Logger, clock: Clock = systemClock): Ports {
  const kv = createStorage({ driver: memoryDriver() });
  return {
    keys: new KvKeyStore(kv),
    counters: new MemoryCounters(),
    cache: new LruCache(() => clock.now()),
    sources: new KvSources(kv, () => clock.now()),
    clock,
    logger,
    fetch: (input, init) => fetch(input, init),
  };
}

export async function buildPorts(config: Config, runtime: RuntimeParts, logger: Logger, clock: Clock = systemClock): Promise<Built> {
  if (config.databaseUrl) {
    const pgh = await openPostgres(config.databaseUrl, logger);
    const kv = createStorage({ driver: dbDriver({ database: pgh.db, tableName: KV_TABLE }) });
    const redis = config.redisUrl ? await openRedis(config.redisUrl, logger) : null;
    const cache = redis ? new RedisCache(config.redisUrl!, redis) : null;
    return {
      ports: {
        keys: new KvKeyStore(kv, () => pgh.keysVersion()),
        counters: redis ? new RedisCounters(redis, pgh.pool) : new PgCounters(pgh.pool),
        cache: cache ?? new LruCache(() => clock.now()),
        sources: new KvSources(kv, () => clock.now()),
        clock,
        logger,
        fetch: (input, init) => fetch(input, init),
        remoteAddress: runtime.remoteAddress,
      },
      describe: `PostgreSQL at ${redactUrl(config.databaseUrl)}${redis ? ` with Redis at ${redactUrl(config.redisUrl!)}` : ""}`,
      close: async () => {
        await cache?.close();
        redis?.disconnect();
        await pgh.close();
      },
    };
  }
  if (config.redisUrl) {
    throw new ConfigError("QUARRY_REDIS_URL", "needs QUARRY_DATABASE_URL too: PostgreSQL keeps what Redis counts");
  }
  if (config.dataDir === ":memory:") {
    return { ports: { ...memoryPorts(logger, clock), remoteAddress: runtime.remoteAddress }, describe: "memory (nothing is kept)", close: async () => {} };
  }
  const sqlite = await openSqlite(config.dataDir, runtime.sqlite);
  sqlite.sync.exec(
    `CREATE TABLE IF NOT EXISTS ${KV_TABLE} (key TEXT PRIMARY KEY, value TEXT, blob BLOB, created_at TEXT DEFAULT CURRENT_TIMESTAMP, updated_at TEXT DEFAULT CURRENT_TIMESTAMP)`,
  );
  const kv: Storage = createStorage({ driver: dbDriver({ database: sqlite.db, tableName: KV_TABLE }) });
  // Changes whenever another connection (the CLI, another process) commits to the file.
  const dataVersion = sqlite.sync.prepare("PRAGMA data_version");
  return {
    ports: {
      keys: new KvKeyStore(kv, () => Number(dataVersion.get()?.data_version)),
      counters: new SqliteCounters(sqlite.sync),
      cache: new LruCache(() => clock.now()),
      sources: new KvSources(kv, () => clock.now()),
      clock,
      logger,
      fetch: (input, init) => fetch(input, init),
      remoteAddress: runtime.remoteAddress,
    },
    describe: `SQLite at ${sqlite.path}`,
    close: () => sqlite.close(),
  };
}

/** A connection URL without its password, for logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparsable URL)";
  }
}
