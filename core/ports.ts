/**
 * The ports: everything the core needs from the outside world arrives through these
 * interfaces, so the core runs unchanged on Node, Deno, Bun or inside another service.
 * Each stateful port has an in-memory, an embedded (SQLite) and a scaled implementation
 * in `adapters/storage/`, all held to the same contract suite in `tests/contracts/`.
 *
 * The port types are a leaf: this file and `ports/` (jobs, the job model, the browser, extraction)
 * import nothing else of the app, so any layer may use them (tests/unit/layers.test.ts).
 */
import type { ExtractPort } from "./ports/extract.ts";
export type { ExtractPort, ExtractRequest } from "./ports/extract.ts";
/** Milliseconds since the Unix epoch. Tests inject a controllable clock. */
export interface Clock {
  now(): number;
}

/** Outbound HTTP, shaped like the standard fetch. Page fetches go through a guarded one. */
export type FetchPort = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export type PlanId = string;

export interface Account {
  name: string;
  plan: PlanId;
  created_at: string;
}

export interface KeyRecord {
  id: string;
  account: string;
  name: string;
  /** SHA-256 of the full secret, lowercase hex. The secret itself is never stored. */
  hash: string;
  /** Masked form, e.g. `qry_ab12...cd34`. */
  prefix: string;
  scopes: string[];
  created_at: string;
  revoked_at: string | null;
}

/** Accounts and keys. Implementations throw `StorageError` when the database is unreachable. */
export interface KeyStore {
  getAccount(name: string): Promise<Account | null>;
  putAccount(account: Account): Promise<void>;
  /** Every account, in no particular order (the operator's `quarry accounts list`). */
  listAccounts(): Promise<Account[]>;
  /** The key whose secret hashes to `hash`, revoked or not; null when none. */
  getKeyByHash(hash: string): Promise<KeyRecord | null>;
  getKey(id: string): Promise<KeyRecord | null>;
  /** Stores a new key; the hash becomes usable only once the record is complete. */
  createKey(key: KeyRecord): Promise<void>;
  /** Every key of the account, revoked ones included, in no particular order. */
  listKeys(account: string): Promise<KeyRecord[]>;
  /** Marks the key revoked and stops its hash from resolving. Returns the updated record. */
  revokeKey(id: string, revokedAt: string): Promise<KeyRecord | null>;
  /** Records that the key was used at `at` (ISO). Kept apart from the record so it never races revocation. */
  touchKey(id: string, at: string): Promise<void>;
  lastUsed(ids: string[]): Promise<Record<string, string | null>>;
  /**
   * Optional: a value that changes whenever any account or key may have changed, here or in
   * another process. While it stays the same, lookups may be served from memory; a store that
   * cannot tell leaves it out and every request reads storage.
   */
  changeMark?(): Promise<string>;
  /** True when no key was ever created (first start). */
  isEmpty(): Promise<boolean>;
  /** A cheap round trip to the database, for health. Throws when unreachable. */
  ping(): Promise<void>;
}

export type { AdmitRequest, AdmitResult, Counters, DailyUsage, TicketParts, UsageCount } from "./ports/counters.ts";
export { makeTicket, parseTicket, RESERVATION_TTL_MS } from "./ports/counters.ts";
import type { Counters } from "./ports/counters.ts";

/** The response cache. Values are JSON-serialisable. */
export interface CachePort {
  get<T>(key: string): Promise<T | null>;
  set(key: string, value: unknown, ttlSeconds: number): Promise<void>;
  /**
   * Optional: the value under `key` as its JSON text (`JSON.stringify` of what was set), for a
   * caller that sends it on without parsing it. A cache that keeps its entries as JSON text (the
   * in-process LRU) answers from that text as it is; without it, callers use `get`.
   */
  getJson?(key: string): Promise<string | null>;
  stats(): Promise<{ entries: number; bytes: number }>;
}

/**
 * The source registry ("intelligence"): one row per site seen in results. A site is its bare
 * host (`bareHost`: lowercase, no `www.`, no trailing dot); record and get both take any raw
 * hostname and normalise it, so `www.Example.com` and `example.com` share one history.
 */
export interface SourceRegistry {
  record(hostname: string, update: { backend?: string; fetched?: boolean; ok?: boolean }): Promise<void>;
  get(hostname: string): Promise<SourceStats | null>;
  count(): Promise<number>;
}

export interface SourceStats {
  hostname: string;
  seen: number;
  backends: Record<string, number>;
  fetch_ok: number;
  fetch_failed: number;
  first_seen: string;
  last_seen: string;
}

/** Structured logger (pino-compatible subset). Never given a secret. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  /**
   * Optional: the gateway's line for an answered request, at info, as `info` would write
   * `{req_id, method, path, via?, status, duration_ms, key_id?, account?, client_gone?}` with
   * the message "request" (members left undefined, and `client_gone` when false, left out).
   * Given by a logger that can write it without the object: one per request (issue #33).
   */
  request?(reqId: string, method: string, path: string, via: string | undefined, status: number, durationMs: number, keyId: string | undefined, account: string | undefined, clientGone: boolean): void;
}

/** What a guarded page fetch returns (adapters/fetch implements it with its SSRF guard). */
export interface FetchedPage {
  url: string;
  finalUrl: string;
  status: number;
  headers: Headers;
  /** Decompressed bytes; the charset is left to the caller. */
  body: Uint8Array;
  contentType: string | null;
  redirects: string[];
  /** The proxy the page came through, as shown (`de:residential http://host:port`, never credentials); absent when direct. */
  via?: string;
}

export type { HostMemory, HostStep, ProxiesPort, ProxyChoice } from "./ports/proxies.ts";
import type { HostMemory, ProxiesPort, ProxyChoice } from "./ports/proxies.ts";

/**
 * Fetches web pages for scrape, search tiers and research. Every implementation refuses
 * private addresses (checked on each redirect) and throws the `PageFetchError`s of
 * core/net/fetch-errors.ts, which map to 422/504/502.
 */
export interface PagePort {
  fetchPage(
    url: string,
    options?: {
      timeoutMs?: number; maxBytes?: number; signal?: AbortSignal; method?: string; headers?: HeadersInit; body?: Uint8Array;
      /** Through the operator's proxies (QUARRY_PROXIES): a fetcher without them throws `UpstreamNetworkError`. */
      proxy?: ProxyChoice;
    },
  ): Promise<FetchedPage>;
}

/**
 * Operational metrics (`GET /metrics`). The core only reports what happens; an adapter keeps
 * the series and renders them (Prometheus text in adapters/metrics/). Labels stay bounded:
 * routes are their patterns, backends and reasons come from fixed lists, and no series names a
 * job, key, account, URL or host. The optional methods came later: an adapter written without
 * them simply leaves their series out.
 */
export interface Metrics {
  request(route: string, method: string, status: number, seconds: number): void;
  backendCall(backend: string, outcome: string, seconds: number): void;
  /** A request refused by a limit: `rate_limited`, `quota_exceeded` or `ip_rate_limited`. */
  refusal(reason: string): void;
  cache(kind: string, hit: boolean): void;
  /** A value read when metrics are collected, one series per label value. */
  gauge(name: string, help: string, label: string, read: () => Record<string, number>): void;
  /**
   * Like `gauge`, for series with any number of labels (none included) whose values may take a
   * query to read: one series per row, each row giving a value for every name in `labels`.
   */
  gaugeRows?(name: string, help: string, labels: string[], read: () => Promise<Array<{ labels: Record<string, string>; value: number }>>): void;
  /** A crawl or batch page this instance recorded, by its outcome (core/jobs/job-metrics.ts: a fixed set). */
  jobPage?(kind: string, outcome: string): void;
  /** A job this instance ended, with its final status and its stopped_reason (`none` when it has none). */
  jobFinished?(kind: string, status: string, reason: string): void;
  /** A webhook delivery attempt: `delivered`, `retried` (failed, tried again later) or `given_up` (its last attempt failed). */
  webhookDelivery?(outcome: string): void;
  render(): Promise<{ contentType: string; body: string }>;
}

export type { RenderAction, RenderHealth, RenderPort, RenderRequest, RenderedPage } from "./ports/render.ts";
import type { RenderPort } from "./ports/render.ts";
export type { JobQueue, JobStore, TaskOutcome } from "./ports/jobs.ts";
import type { JobQueue, JobStore } from "./ports/jobs.ts";
import type { CollectionStore } from "./ports/collections.ts";
export type { PageRead, ReadHistory } from "./ports/reads.ts";
import type { ReadHistory } from "./ports/reads.ts";
export type { MonitorRecord, MonitorRun, MonitorStore } from "./ports/monitors.ts";
import type { MonitorStore } from "./ports/monitors.ts";

/** Swagger UI's files, as the adapter found them: `swagger-ui-bundle.js`, `swagger-ui.css` (GET /docs). */
export type DocsAssets = (name: "swagger-ui-bundle.js" | "swagger-ui.css") => Promise<Uint8Array | null>;

export interface Ports {
  keys: KeyStore;
  counters: Counters;
  cache: CachePort;
  sources: SourceRegistry;
  clock: Clock;
  logger: Logger;
  /** Outbound HTTP for upstream APIs (backends). */
  fetch: FetchPort;
  /** Guarded page fetches (scrape, search tiers, research). */
  pages: PagePort;
  /** Site-level jobs; absent = map works, crawl and batch answer 503. `queue` absent = in process. */
  jobs?: { store: JobStore; queue?: JobQueue };
  /** The accounts' own indexes, and their last read of each URL (the `changes` format); absent = those answer 503. */
  collections?: CollectionStore;
  reads?: ReadHistory;
  /** Monitors and their runs (issue #31); absent = /v1/monitors answers 503. They need `jobs` and `reads` too. */
  monitors?: MonitorStore;
  /** Where HTML pages are extracted; absent = in process. */
  extract?: ExtractPort;
  /** A browser for pages that need JavaScript; absent when the process has none. */
  render?: RenderPort;
  /** The operator's proxies (QUARRY_PROXIES); absent or empty when there are none. */
  proxies?: ProxiesPort;
  /** Where escalation remembers each host's working step; absent = in this process's memory. */
  hosts?: HostMemory;
  /** Swagger UI's files for GET /docs (the adapters read the swagger-ui-dist package). */
  docsAssets?: DocsAssets;
  /** Operational metrics; absent when the operator has not turned them on (QUARRY_METRICS). */
  metrics?: Metrics;
  /**
   * The client's socket address, from the runtime adapter (each server exposes it differently).
   * Receives the raw Request plus whatever the adapter bound as Hono's env.
   */
  remoteAddress?: (req: Request, env: unknown) => string | undefined;
  /**
   * The process's open file descriptors and its soft limit on them (null: no limit), for /health;
   * absent where the runtime cannot tell (the adapters read Linux's /proc).
   */
  descriptors?: () => { open: number; limit: number | null };
  /**
   * Runs `run` once the I/O callbacks of this turn of the event loop have run (the adapters give
   * setImmediate where the runtime has it): work shared by the requests that arrived in one turn
   * (/health). Absent = a zero timer.
   */
  nextTurn?: (run: () => void) => void;
}
