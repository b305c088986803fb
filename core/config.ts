/**
 * Configuration from environment variables (api.md §1). Pure: the adapter passes the
 * environment in as a plain object. Every bad value stops start-up with a message naming
 * its variable.
 */
import { applyPlanOverrides, DEFAULT_PLANS, type PlanOverride, type PlanTable } from "./limits/plans.ts";
import type { BucketConfig } from "./limits/token-bucket.ts";
import { AllowListError, parseAllowList } from "./net/allow-list.ts";
import { BACKEND_IDS } from "./backends/catalogue.ts";
import { parseTrustProxy, type TrustProxy } from "./net/trusted-proxies.ts";
import { parseProxies, ProxyListError, type ProxyEntry, type ProxySettings } from "./net/proxy-pool.ts";
import { parseJobsConfig, parseSizeText, type JobsConfig } from "./jobs/config.ts";

export type Env = Record<string, string | undefined>;

export { BACKEND_IDS };

export interface BackendSettings {
  url?: string;
  key?: string;
  token?: string;
  [extra: string]: string | undefined;
}

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  plans: PlanTable;
  ipRate: BucketConfig | null;
  /** Whose X-Forwarded-For counts: nobody, every peer, or the listed proxies. */
  trustProxy: TrustProxy;
  /** Origins browsers may call from (QUARRY_CORS_ORIGINS); empty = no CORS, `["*"]` = any. */
  corsOrigins: string[];
  logLevel: string;
  backends: Record<string, BackendSettings>;
  llm: { url: string; model: string | null; key: string | null } | null;
  /** Optional OpenAI-compatible embeddings endpoint for research's passage ranking. */
  embeddings: { url: string; model: string | null; key: string | null } | null;
  egressAllow: string[];
  /** GET /metrics (QUARRY_METRICS), behind a bearer token when QUARRY_METRICS_TOKEN is set. */
  metrics: { token: string | null } | null;
  /** Rendering: QUARRY_CHROMIUM_PATH (null = look in the usual places), QUARRY_BROWSER_PAGES. */
  browser: { path: string | null; pages: number };
  /** Extraction threads (QUARRY_EXTRACT_WORKERS, 0 = in process) and their idle time (QUARRY_EXTRACT_IDLE, ms). */
  extract: { workers: number; idleMs: number };
  /** The response cache's bounds, in bytes (QUARRY_CACHE_MAX_BYTES, QUARRY_CACHE_MAX_ENTRY_BYTES). */
  cache: { maxBytes: number; maxEntryBytes: number };
  /** HTTP(S)_PROXY / NO_PROXY for page fetches, from the env handed to start-up (never the process's own). */
  proxy: ProxySettings | null;
  /** api.md §12: QUARRY_PROXIES (credentials stay in `url`), QUARRY_PROXY_PAUSE (a failing proxy's first pause), QUARRY_ESCALATION_TTL (a host's working step remembered). */
  proxies: { entries: ProxyEntry[]; pauseMs: number; escalationTtlMs: number };
  /** Map, crawl and batch jobs: QUARRY_JOB_TTL, QUARRY_JOB_DEADLINE, QUARRY_CRAWL_*, QUARRY_PUBLIC_URL. */
  jobs: JobsConfig;
  version: string;
}


/** The proxy settings an environment asks for; lowercase names win, as curl does. */
export function parseProxyEnv(env: Env): ProxySettings | null {
  const pick = (name: string) => env[name.toLowerCase()]?.trim() || env[name.toUpperCase()]?.trim() || undefined;
  const proxy: ProxySettings = { http: pick("http_proxy"), https: pick("https_proxy"), noProxy: pick("no_proxy") };
  for (const name of ["http_proxy", "https_proxy"]) {
    const value = pick(name);
    if (!value) continue;
    const variable = env[name]?.trim() ? name : name.toUpperCase();
    const text = value.includes("://") ? value : `http://${value}`;
    if (!URL.canParse(text)) throw new ConfigError(variable, `"${value}" is not a URL`);
    const url = new URL(text);
    if (url.protocol !== "http:") throw new ConfigError(variable, `${url.protocol}// proxies are not supported; use an http:// proxy URL (https is tunnelled through it with CONNECT)`);
  }
  return proxy.http || proxy.https ? proxy : null;
}

/** A bad entry is named by its place, never its text (it holds credentials). */ function parseProxyList(env: Env): ProxyEntry[] {
  try { return parseProxies(str(env, "QUARRY_PROXIES")); } catch (e) { throw e instanceof ProxyListError ? new ConfigError("QUARRY_PROXIES", e.message) : e; }
}

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = "ConfigError";
  }
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

function str(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

function parseUrl(env: Env, name: string, protocols: string[]): string | null {
  const raw = str(env, name);
  if (!raw) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(name, `"${raw}" is not a URL`);
  }
  if (!protocols.includes(u.protocol)) {
    throw new ConfigError(name, `expected a ${protocols.join(" or ")} URL, got "${u.protocol}"`);
  }
  return raw;
}

function parsePort(env: Env): number {
  const raw = str(env, "QUARRY_PORT") ?? "8080";
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError("QUARRY_PORT", `"${raw}" is not a port number (0-65535)`);
  }
  return port;
}

function parseIpRate(env: Env): BucketConfig | null {
  const raw = str(env, "QUARRY_IP_RATE") ?? "100/200";
  if (raw === "off") return null;
  const m = /^(\d+(?:\.\d+)?)\/(\d+)$/.exec(raw);
  const rate = m ? Number(m[1]) : NaN;
  const burst = m ? Number(m[2]) : NaN;
  if (!m || rate <= 0 || burst < 1) {
    throw new ConfigError("QUARRY_IP_RATE", `"${raw}" is not "<per second>/<burst>" (e.g. 100/200) or "off"`);
  }
  return { ratePerSecond: rate, burst };
}

/** A size in bytes: `67108864`, `64MB`, `512k` (units are binary: 1 MB = 1024 KB). */
function parseSize(env: Env, name: string, fallback: number): number {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  const size = parseSizeText(raw);
  if (size === null) throw new ConfigError(name, `"${raw}" is not a size such as 64MB, 512KB or 1048576`);
  return size;
}

function parseBool(env: Env, name: string): boolean {
  const raw = (str(env, name) ?? "false").toLowerCase();
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new ConfigError(name, `"${raw}" is not a boolean (true/false)`);
}

function parseTrust(env: Env): TrustProxy {
  try {
    return parseTrustProxy(env.QUARRY_TRUST_PROXY);
  } catch (e) {
    throw new ConfigError("QUARRY_TRUST_PROXY", (e as Error).message);
  }
}

function parseCount(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) throw new ConfigError(name, `"${raw}" is not a whole number from ${min} to ${max}`);
  return n;
}

/** A comma-separated list of origins (scheme://host[:port], nothing after) or `*`. */
function parseCorsOrigins(env: Env): string[] {
  const items = (str(env, "QUARRY_CORS_ORIGINS") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  if (items.includes("*")) return ["*"];
  return items.map((item) => {
    let u: URL | null = null;
    try {
      u = new URL(item);
    } catch {
      // reported below
    }
    if (!u || !["http:", "https:"].includes(u.protocol) || u.pathname !== "/" || u.search || u.hash || u.username || u.password || item.endsWith("?") || item.endsWith("#")) {
      throw new ConfigError("QUARRY_CORS_ORIGINS", `"${item}" is not an origin such as https://app.example.com (scheme, host and port only) or *`);
    }
    return u.origin;
  });
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0;
}

/** Each field QUARRY_PLANS may set: whether it may be null (no cap), its least value, and its rule in words. */
const PLAN_FIELDS: Record<keyof PlanOverride, [nullable: boolean, min: number, words: string]> = {
  quota: [true, 0, "a whole number >= 0 or null"],
  per_minute: [false, 1, "a whole number > 0"],
  jobs_concurrent: [false, 1, "a whole number > 0"],
  jobs_storage_bytes: [true, 1, "a whole number of bytes > 0 or null"],
  index_documents: [true, 0, "a whole number >= 0 or null"],
  index_bytes: [true, 0, "a whole number of bytes >= 0 or null"],
  monitors: [true, 0, "a whole number >= 0 or null"],
};

function parsePlans(env: Env): PlanTable {
  const raw = str(env, "QUARRY_PLANS");
  if (!raw) return DEFAULT_PLANS;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError("QUARRY_PLANS", "is not valid JSON");
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ConfigError("QUARRY_PLANS", 'expected an object such as {"free":{"quota":5,"per_minute":3}}');
  }
  const overrides: Record<string, PlanOverride> = {};
  for (const [id, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (!/^[a-z][a-z0-9_-]{0,31}$/.test(id)) throw new ConfigError("QUARRY_PLANS", `"${id}" is not a plan id`);
    if (!value || typeof value !== "object") throw new ConfigError("QUARRY_PLANS", `plan "${id}" must be an object`);
    const fields = value as Record<string, unknown>;
    const unknown = Object.keys(fields).filter((f) => !Object.hasOwn(PLAN_FIELDS, f));
    if (unknown.length) throw new ConfigError("QUARRY_PLANS", `plan "${id}" has unknown fields: ${unknown.join(", ")}`);
    for (const [field, [nullable, min, words]] of Object.entries(PLAN_FIELDS)) {
      const v = fields[field];
      if (v === undefined || (nullable && v === null)) continue;
      if (!(isCount(v) && v >= min)) throw new ConfigError("QUARRY_PLANS", `plan "${id}": ${field} must be ${words}`);
    }
    overrides[id] = fields as PlanOverride;
  }
  try {
    return applyPlanOverrides(DEFAULT_PLANS, overrides);
  } catch (e) {
    throw new ConfigError("QUARRY_PLANS", (e as Error).message);
  }
}

function parseBackends(env: Env): Record<string, BackendSettings> {
  const out: Record<string, BackendSettings> = {};
  for (const id of BACKEND_IDS) {
    const up = id.toUpperCase();
    const settings: BackendSettings = {};
    const url = parseUrl(env, `QUARRY_${up}_URL`, ["http:", "https:"]);
    if (url) settings.url = url;
    const key = str(env, `QUARRY_${up}_KEY`);
    if (key) settings.key = key;
    const token = str(env, `QUARRY_${up}_TOKEN`);
    if (token) settings.token = token;
    out[id] = settings;
  }
  return out;
}

export function parseConfig(env: Env, version = "0.0.0"): Config {
  const logLevel = (str(env, "QUARRY_LOG_LEVEL") ?? "info").toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError("QUARRY_LOG_LEVEL", `"${logLevel}" is not one of ${LOG_LEVELS.join(", ")}`);
  }
  const llmUrl = parseUrl(env, "QUARRY_LLM_URL", ["http:", "https:"]);
  const embeddingsUrl = parseUrl(env, "QUARRY_EMBEDDINGS_URL", ["http:", "https:"]);
  const egressAllow = (str(env, "QUARRY_EGRESS_ALLOW") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  try {
    parseAllowList(egressAllow);
  } catch (e) {
    if (e instanceof AllowListError) throw new ConfigError("QUARRY_EGRESS_ALLOW", e.message.replace(/^QUARRY_EGRESS_ALLOW /, ""));
    throw e;
  }
  const jobs = parseJobsConfig(env);
  if ("problem" in jobs) throw new ConfigError(jobs.variable, jobs.problem);
  const plans = parsePlans(env);
  // A new job needs room for one page at the per-page cap: a plan allowing less could start none.
  for (const p of Object.values(plans)) {
    if (p.jobsStorageBytes !== null && p.jobsStorageBytes < jobs.pageBytes) {
      throw new ConfigError("QUARRY_PLANS", `plan "${p.id}": jobs_storage_bytes (${p.jobsStorageBytes}) is less than one page at QUARRY_JOB_PAGE_BYTES (${jobs.pageBytes}), so its accounts could start no crawl or batch job`);
    }
  }
  return {
    host: str(env, "QUARRY_HOST") ?? "127.0.0.1",
    port: parsePort(env),
    dataDir: str(env, "QUARRY_DATA_DIR") ?? "./data",
    databaseUrl: parseUrl(env, "QUARRY_DATABASE_URL", ["postgres:", "postgresql:"]),
    redisUrl: parseUrl(env, "QUARRY_REDIS_URL", ["redis:", "rediss:"]),
    plans,
    ipRate: parseIpRate(env),
    trustProxy: parseTrust(env),
    corsOrigins: parseCorsOrigins(env),
    logLevel,
    backends: parseBackends(env),
    llm: llmUrl ? { url: llmUrl, model: str(env, "QUARRY_LLM_MODEL") ?? null, key: str(env, "QUARRY_LLM_KEY") ?? null } : null,
    embeddings: embeddingsUrl ? { url: embeddingsUrl, model: str(env, "QUARRY_EMBEDDINGS_MODEL") ?? null, key: str(env, "QUARRY_EMBEDDINGS_KEY") ?? null } : null,
    egressAllow,
    metrics: parseBool(env, "QUARRY_METRICS") ? { token: str(env, "QUARRY_METRICS_TOKEN") ?? null } : null,
    browser: { path: str(env, "QUARRY_CHROMIUM_PATH") ?? null, pages: parseCount(env, "QUARRY_BROWSER_PAGES", 4, 1, 64) },
    extract: { workers: parseCount(env, "QUARRY_EXTRACT_WORKERS", 1, 0, 16), idleMs: parseCount(env, "QUARRY_EXTRACT_IDLE", 10, 1, 3600) * 1000 },
    cache: {
      maxBytes: parseSize(env, "QUARRY_CACHE_MAX_BYTES", 32 * 2 ** 20),
      maxEntryBytes: parseSize(env, "QUARRY_CACHE_MAX_ENTRY_BYTES", 2 * 2 ** 20),
    },
    proxy: parseProxyEnv(env),
    proxies: {
      entries: parseProxyList(env), pauseMs: parseCount(env, "QUARRY_PROXY_PAUSE", 30, 1, 86_400) * 1000,
      escalationTtlMs: parseCount(env, "QUARRY_ESCALATION_TTL", 3600, 1, 30 * 86_400) * 1000,
    },
    jobs,
    version,
  };
}
