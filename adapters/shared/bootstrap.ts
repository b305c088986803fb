/**
 * Builds the ports from the configuration. Every runtime adapter and the CLI start here,
 * so they share one storage layout: SQLite in QUARRY_DATA_DIR by default, PostgreSQL with
 * QUARRY_DATABASE_URL (plus Redis with QUARRY_REDIS_URL), or memory for tests and demos.
 */
import { createStorage, type Storage } from "unstorage";
import dbDriver from "unstorage/drivers/db0";
import memoryDriver from "unstorage/drivers/memory";
import { ConfigError, type Config } from "../../core/config.ts";
import type { CollectionStore } from "../../core/ports/collections.ts";
import type { SyncSqlite } from "../storage/sqlite-counters.ts";
import { createDatabase } from "db0";
import type { CachePort, Clock, Counters, FetchPort, HostMemory, KeyStore, Logger, MonitorStore, PagePort, Ports, ReadHistory, SourceRegistry } from "../../core/ports.ts";
import { KvKeyStore } from "../storage/kv-key-store.ts";
import { coalesced } from "../storage/coalesce.ts";
import { KvSources } from "../storage/kv-sources.ts";
import { KvHostMemory } from "../storage/kv-host-memory.ts";
import { ProxyPool } from "../../core/net/proxy-pool.ts";
import { LruCache, type CacheLimits } from "../storage/lru-cache.ts";
import { MemoryCounters } from "../storage/memory-counters.ts";
import { SqliteCounters } from "../storage/sqlite-counters.ts";
import { sqliteFormat } from "../storage/data-format.ts";
import { openSqlite, sqliteProbe, type SqliteConnectorFactory } from "./sqlite.ts";
import { DataDirError } from "./data-dir.ts";
// Each from its own module, not fetch/mod.ts: that one also exports the ofetch client, which loads
// only with the first upstream request (api-fetch.ts).
import { createApiFetchPort } from "../fetch/api-fetch.ts";
import { createSafeFetch } from "../fetch/safe-fetch.ts";
import { systemResolver } from "../fetch/node-hop.ts";
import { quarryUserAgent } from "../fetch/types.ts";
import { parseAllowList } from "../../core/net/allow-list.ts";
import { createBrowserPool, findChromium, type BrowserPool } from "../browser/pool.ts";
import { packageVersion } from "./version.ts";
import { docsAssets } from "./docs-assets.ts";
import { MemoryJobStore } from "../jobs/memory-store.ts";
import { SqlJobStore } from "../jobs/sql-store.ts";
import { inMemoryCollections, SqlCollectionStore } from "../collections/sql-store.ts";
import { MemoryReadHistory, SqlReadHistory } from "../jobs/read-history.ts";
import { MemoryMonitorStore, SqlMonitorStore } from "../jobs/monitor-store.ts";
import { sqliteDriver } from "../jobs/sql-drivers.ts";
import { ExtractPool, type WorkerLike } from "../extract/pool.ts";
import { descriptorProbe } from "./descriptors.ts";

export const KV_TABLE = "quarry_kv";
export const systemClock: Clock = { now: () => Date.now() };

// We create the table ourselves (migrations) before the driver would; its notice is noise.
(globalThis as Record<string, unknown>).__unstorage_db0_experimental_warning__ = true;

export interface RuntimeParts {
  sqlite: SqliteConnectorFactory;
  remoteAddress?: Ports["remoteAddress"];
  /** Replaces the guarded page fetcher (tests); the default suits Node, Deno and Bun alike. `proxies`: QUARRY_PROXIES as a pool. */
  pages?: (config: Config, proxies: ProxyPool) => PagePort;
  /** How this runtime starts an extraction worker (adapters/extract/spawn.ts); absent = extract in process. */
  extractWorkers?: () => Promise<() => WorkerLike>;
}

interface Stores {
  keys: KeyStore;
  counters: Counters;
  cache: CachePort;
  sources: SourceRegistry;
  hosts: HostMemory;
  jobs: NonNullable<Ports["jobs"]>;
  collections?: CollectionStore;
  reads: ReadHistory;
  monitors: MonitorStore;
  describe: string;
  close(): Promise<void>;
}

export interface Built {
  ports: Ports;
  /** Where the data lives, for start-up messages. */
  describe: string;
  close(): Promise<void>;
}

/**
 * The guarded page fetcher: node:http with the resolved address checked at connect time, on
 * every redirect. Deno's and Bun's node:http run the same check (tests/fetch/runtimes.test.ts).
 */
export function guardedPages(config: Config, proxies?: ProxyPool): PagePort {
  return createSafeFetch({
    ...(proxies?.size ? { proxies } : {}),
    allow: parseAllowList(config.egressAllow),
    userAgent: quarryUserAgent(packageVersion()),
    // From the env handed to start-up (Deno passes its own), like every other setting.
    proxy: config.proxy ?? undefined,
  });
}

/** Pages cannot be fetched: for in-memory test ports that were given no fetcher. */
const noPages: PagePort = {
  fetchPage: async () => {
    throw new Error("no page fetcher configured for this process");
  },
};

/**
 * The upstream transport (ofetch, no retries): the core reaches it only through its egress
 * policy. No default Accept: each backend asks for what it parses (HTML, JSON).
 */
export function upstreamTransport(): FetchPort {
  return createApiFetchPort({ userAgent: quarryUserAgent(packageVersion()), accept: null });
}

function memoryStores(clock: Clock, limits: CacheLimits = {}, ttlMs?: number, sqlite?: SqliteConnectorFactory): Stores {
  const kv = createStorage({ driver: memoryDriver() });
  return {
    keys: new KvKeyStore(kv),
    counters: new MemoryCounters(),
    cache: new LruCache(() => clock.now(), limits),
    sources: new KvSources(kv, () => clock.now()),
    hosts: new KvHostMemory(kv, () => clock.now(), ttlMs),
    jobs: { store: new MemoryJobStore() },
    ...(sqlite ? { collections: inMemoryCollections(async () => sqliteDriver((await createDatabase(sqlite({ path: ":memory:", name: ":memory:" })).getInstance()) as unknown as SyncSqlite)) } : {}),
    reads: new MemoryReadHistory(),
    monitors: new MemoryMonitorStore(),
    describe: "memory (nothing is kept)",
    close: async () => {},
  };
}

async function postgresStores(config: Config, logger: Logger, clock: Clock): Promise<Stores> {
  // The PostgreSQL and Redis clients load only when configured: the embedded default never pays for them.
  const [{ PgCounters }, { openPostgres }, { openRedis }, { RedisCache }, { RedisCounters }] = await Promise.all([
    import("../storage/pg-counters.ts"),
    import("../storage/postgres.ts"),
    import("../storage/redis.ts"),
    import("../storage/redis-cache.ts"),
    import("../storage/redis-counters.ts"),
  ]);
  const pgh = await openPostgres(config.databaseUrl!, logger);
  const kv = createStorage({ driver: dbDriver({ database: pgh.db, tableName: KV_TABLE }) });
  // A Redis that refuses the URL stops start-up: the pool must not keep the process alive then.
  const redis = config.redisUrl
    ? await openRedis(config.redisUrl, logger).catch(async (err) => {
        await pgh.close();
        throw err;
      })
    : null;
  const cache = redis ? new RedisCache(redis, { maxEntryBytes: config.cache.maxEntryBytes }) : null;
  const [{ SqlJobStore: PgJobStore }, { pgDriver }, { PgBossQueue }] = await Promise.all([
    import("../jobs/sql-store.ts"),
    import("../jobs/sql-drivers.ts"),
    import("../jobs/pg-boss-queue.ts"),
  ]);
  // Several instances share the work of every job through pg-boss (see pg-boss-queue.ts).
  const { PG_MIGRATION_LOCK } = await import("../storage/pg-schema.ts");
  const queue = new PgBossQueue(config.databaseUrl!, logger, async (fn) => {
    const client = await pgh.pool.connect();
    try {
      await client.query("SELECT pg_advisory_lock($1)", [PG_MIGRATION_LOCK + 1]);
      return await fn();
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [PG_MIGRATION_LOCK + 1]).catch(() => {});
      client.release();
    }
  }, config.jobs.recoveryMs);
  const jobStore = new PgJobStore(pgDriver(pgh.pool), (raw, tasks) => queue.enqueueWith(raw, tasks));
  await jobStore.init(false);
  const collections = new SqlCollectionStore(pgDriver(pgh.pool));
  await collections.init();
  const reads = new SqlReadHistory(pgDriver(pgh.pool));
  const monitors = new SqlMonitorStore(pgDriver(pgh.pool));
  return {
    // One version read (and one ping) per turn of the event loop, shared by that turn's requests (coalesce.ts).
    keys: new KvKeyStore(kv, coalesced(() => pgh.keysVersion()), coalesced(async () => void (await kv.hasItem("ping")))),
    counters: redis ? new RedisCounters(redis, pgh.pool) : new PgCounters(pgh.pool),
    cache: cache ?? new LruCache(() => clock.now(), config.cache),
    sources: new KvSources(kv, () => clock.now()),
    hosts: new KvHostMemory(kv, () => clock.now(), config.proxies.escalationTtlMs),
    jobs: { store: jobStore, queue },
    collections,
    reads,
    monitors,
    describe: `PostgreSQL at ${redactUrl(config.databaseUrl!)}${redis ? ` with Redis at ${redactUrl(config.redisUrl!)}` : ""}`,
    close: async () => {
      await queue.stop();
      await cache?.close();
      redis?.disconnect();
      await pgh.close();
    },
  };
}

async function sqliteStores(config: Config, runtime: RuntimeParts, clock: Clock, worker: boolean): Promise<Stores> {
  const sqlite = await openSqlite(config.dataDir, runtime.sqlite);
  // Data a newer Quarry wrote is refused before anything here changes it (data-format.ts).
  try {
    sqliteFormat(sqlite.sync, packageVersion());
  } catch (err) {
    await sqlite.close();
    throw err;
  }
  sqlite.sync.exec(
    `CREATE TABLE IF NOT EXISTS ${KV_TABLE} (key TEXT PRIMARY KEY, value TEXT, blob BLOB, created_at TEXT DEFAULT CURRENT_TIMESTAMP, updated_at TEXT DEFAULT CURRENT_TIMESTAMP)`,
  );
  const kv: Storage = createStorage({ driver: dbDriver({ database: sqlite.db, tableName: KV_TABLE }) });
  // One server owns the file (server-lock.ts): entries a killed process left claimed are pending again.
  // Not the CLI's to do: it works beside a running server, whose claims and webhook attempts are live.
  const sql = sqliteDriver(sqlite.sync);
  const jobStore = new SqlJobStore(sql);
  await jobStore.init(worker);
  const collections = new SqlCollectionStore(sql);
  await collections.init();
  const reads = new SqlReadHistory(sql);
  await reads.init();
  const monitors = new SqlMonitorStore(sql);
  await monitors.init();
  // Changes whenever another connection (the CLI, another process) commits to the file.
  const dataVersion = sqlite.sync.prepare("PRAGMA data_version");
  const counters = new SqliteCounters(sqlite.sync);
  return {
    // Each is read once per turn of the event loop, for all the requests that asked in it (coalesce.ts):
    // the pragma costs a WAL read lock, the probe a write.
    keys: new KvKeyStore(kv, coalesced(() => Number(dataVersion.get()?.data_version)), coalesced(sqliteProbe(sqlite, sql, clock))),
    counters,
    cache: new LruCache(() => clock.now(), config.cache),
    sources: new KvSources(kv, () => clock.now()),
    hosts: new KvHostMemory(kv, () => clock.now(), config.proxies.escalationTtlMs),
    jobs: { store: jobStore },
    collections,
    reads,
    monitors,
    describe: `SQLite at ${sqlite.path}`,
    close: () => {
      try {
        counters.flushNow();
      } catch {
        // a file that cannot be written at the end: its window hits were all there was to lose
      }
      return sqlite.close();
    },
  };
}

/** The browser for pages that need JavaScript: started on the first render, not at start-up. */
export function browserPool(config: Config, logger: Logger, proxies?: ProxyPool): BrowserPool {
  return createBrowserPool({
    executablePath: findChromium(config.browser.path),
    maxPages: config.browser.pages,
    allow: parseAllowList(config.egressAllow),
    resolver: systemResolver,
    userAgent: quarryUserAgent(packageVersion()),
    logger,
    ...(proxies?.size ? { proxies } : {}),
  });
}

/** A worker's heap past this is handed back after its page (a fresh worker holds about 30 MB). */
export const EXTRACT_WORKER_MAX_HEAP = 96 * 2 ** 20;

/** The extraction pool, when the runtime can start workers and QUARRY_EXTRACT_WORKERS is not 0. */
async function extractPool(config: Config, runtime: RuntimeParts, logger: Logger): Promise<ExtractPool | null> {
  if (!runtime.extractWorkers || config.extract.workers === 0) return null;
  try {
    return new ExtractPool({ size: config.extract.workers, idleMs: config.extract.idleMs, maxHeapBytes: EXTRACT_WORKER_MAX_HEAP, spawn: await runtime.extractWorkers(), logger });
  } catch (err) {
    logger.warn({ err: String(err) }, "extraction workers unavailable; extracting in process");
    return null;
  }
}

function assemble(stores: Stores, config: Config, runtime: RuntimeParts, logger: Logger, clock: Clock, extract: ExtractPool | null): Built {
  const { describe, close, ...storage } = stores;
  const proxies = new ProxyPool(config.proxies.entries, { pauseMs: config.proxies.pauseMs, now: () => clock.now() });
  const render = browserPool(config, logger, proxies);
  const descriptors = descriptorProbe();
  return {
    ports: {
      ...storage,
      clock,
      logger,
      fetch: upstreamTransport(),
      pages: runtime.pages?.(config, proxies) ?? guardedPages(config, proxies),
      proxies,
      remoteAddress: runtime.remoteAddress,
      docsAssets: docsAssets(),
      render,
      ...(extract ? { extract } : {}),
      ...(descriptors ? { descriptors } : {}),
      ...nextTurn,
    },
    describe,
    close: async () => {
      await render.close();
      await extract?.close();
      await close();
    },
  };
}

/** After this turn's I/O callbacks: setImmediate where the runtime has it (Node, Bun, Deno's Node globals). */
const nextTurn: Pick<Ports, "nextTurn"> = typeof globalThis.setImmediate === "function" ? { nextTurn: (run) => void setImmediate(run) } : {};

export function memoryPorts(logger: Logger, clock: Clock = systemClock, pages: PagePort = noPages, sqlite?: SqliteConnectorFactory): Ports {
  const { describe: _d, close: _c, ...storage } = memoryStores(clock, {}, undefined, sqlite);
  return { ...storage, clock, logger, fetch: upstreamTransport(), pages, docsAssets: docsAssets(), ...nextTurn };
}

/**
 * `worker: false` (the CLI): the ports of a process that runs no job work beside the server that
 * does, so opening them changes nothing of that server's work in progress.
 */
export async function buildPorts(config: Config, runtime: RuntimeParts, logger: Logger, clock: Clock = systemClock, { worker = true } = {}): Promise<Built> {
  if (config.redisUrl && !config.databaseUrl) {
    throw new ConfigError("QUARRY_REDIS_URL", "needs QUARRY_DATABASE_URL too: PostgreSQL keeps what Redis counts");
  }
  const stores = await openStores(config, runtime, logger, clock, worker);
  const built = assemble(stores, config, runtime, logger, clock, await extractPool(config, runtime, logger));
  // prom-client is loaded only when metrics are on.
  if (config.metrics) built.ports.metrics = (await import("../metrics/prometheus.ts")).createPrometheusMetrics();
  return built;
}

/** Thrown when the configured database cannot be opened at start-up: one line naming it. */
export class StorageOpenError extends Error {}

async function openStores(config: Config, runtime: RuntimeParts, logger: Logger, clock: Clock, worker: boolean): Promise<Stores> {
  if (!config.databaseUrl && config.dataDir === ":memory:") return memoryStores(clock, config.cache, config.proxies.escalationTtlMs, runtime.sqlite);
  try {
    return config.databaseUrl ? await postgresStores(config, logger, clock) : await sqliteStores(config, runtime, clock, worker);
  } catch (err) {
    if (err instanceof DataDirError || err instanceof ConfigError) throw err;
    const where = config.databaseUrl
      ? `the PostgreSQL database at QUARRY_DATABASE_URL (${redactUrl(config.databaseUrl)})`
      : `the SQLite database in QUARRY_DATA_DIR (${config.dataDir})`;
    throw new StorageOpenError(`cannot open ${where}: ${err instanceof Error ? err.message : String(err)}`);
  }
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
