/** The jobs' settings from the environment (api.md §9; README, "Configuration"). */

export interface JobsConfig {
  /** How long a finished job and its pages are kept (QUARRY_JOB_TTL, default 24 h). */
  ttlMs: number;
  /** Longest a job may run; it then stops with `stopped_reason: "deadline"` (QUARRY_JOB_DEADLINE, default 1 h). */
  deadlineMs: number;
  /** Pages fetched at once by this process, all jobs together (QUARRY_CRAWL_CONCURRENCY, default 8). */
  concurrency: number;
  /**
   * Requests at once to one host (QUARRY_CRAWL_HOST_CONCURRENCY, default 2; 0 = no limit, for benchmarks).
   * With several instances on PostgreSQL the limit (and Crawl-delay) holds for all of them together.
   */
  hostConcurrency: number;
  /**
   * With several instances: how soon the work a dead instance held (a claimed page, a host slot, a
   * webhook delivery) is taken over by another (QUARRY_JOB_RECOVERY, default 30 s). Live instances
   * renew what they hold every third of it.
   */
  recoveryMs: number;
  /** Base of absolute `next` and `status_url` links (QUARRY_PUBLIC_URL); unset = from the request. */
  publicUrl: string | null;
  /** Most bytes one page's stored content may take (QUARRY_JOB_PAGE_BYTES, default 1 MB); past it its formats are cut. */
  pageBytes: number;
  /** Most links a crawl takes from one page (QUARRY_JOB_PAGE_LINKS, default 1000); the rest are counted, not followed. */
  pageLinks: number;
}

const SIZE_UNITS: Record<string, number> = { "": 1, b: 1, k: 2 ** 10, kb: 2 ** 10, kib: 2 ** 10, m: 2 ** 20, mb: 2 ** 20, mib: 2 ** 20, g: 2 ** 30, gb: 2 ** 30, gib: 2 ** 30 };

/** A size in bytes: `67108864`, `64MB`, `512k` (units are binary: 1 MB = 1024 KB); null when it is not one. */
export function parseSizeText(raw: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(raw.trim());
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  return m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : null;
}

type Env = Record<string, string | undefined>;
export type JobsConfigProblem = { variable: string; problem: string };

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `24h`, `30m`, `90s`, `500ms`, `2d`, or plain seconds. */
export function parseDuration(raw: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/i.exec(raw.trim());
  if (!m) return null;
  const ms = Number(m[1]) * UNITS[(m[2] ?? "s").toLowerCase()]!;
  return ms >= 1 && Number.isFinite(ms) ? Math.round(ms) : null;
}

export function parseJobsConfig(env: Env): JobsConfig | JobsConfigProblem {
  const get = (name: string) => env[name]?.trim() || undefined;
  const duration = (name: string, fallback: number) => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    const ms = parseDuration(raw);
    return ms ?? ({ variable: name, problem: `"${raw}" is not a duration such as 24h, 30m, 90s or 3600` } as JobsConfigProblem);
  };
  const count = (name: string, fallback: number, min: number, max: number) => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    return /^\d+$/.test(raw) && n >= min && n <= max ? n : ({ variable: name, problem: `"${raw}" is not a whole number from ${min} to ${max}` } as JobsConfigProblem);
  };
  const ttlMs = duration("QUARRY_JOB_TTL", 24 * 3_600_000);
  const deadlineMs = duration("QUARRY_JOB_DEADLINE", 3_600_000);
  const concurrency = count("QUARRY_CRAWL_CONCURRENCY", 8, 1, 256);
  const hostConcurrency = count("QUARRY_CRAWL_HOST_CONCURRENCY", 2, 0, 64);
  const recoveryMs = duration("QUARRY_JOB_RECOVERY", 30_000);
  const pageLinks = count("QUARRY_JOB_PAGE_LINKS", 1000, 1, 100_000);
  const rawPageBytes = get("QUARRY_JOB_PAGE_BYTES");
  const pageBytes = rawPageBytes === undefined ? 2 ** 20 : parseSizeText(rawPageBytes);
  if (pageBytes === null || pageBytes < 4096 || pageBytes > 64 * 2 ** 20) {
    return { variable: "QUARRY_JOB_PAGE_BYTES", problem: `"${rawPageBytes}" is not a size from 4KB to 64MB, such as 1MB or 512KB` };
  }
  for (const v of [ttlMs, deadlineMs, concurrency, hostConcurrency, recoveryMs, pageLinks]) if (typeof v !== "number") return v;
  // Renewed every third of it: below a second, a busy event loop would let live work look dead.
  if ((recoveryMs as number) < 1000 || (recoveryMs as number) > 3_600_000) {
    return { variable: "QUARRY_JOB_RECOVERY", problem: `"${get("QUARRY_JOB_RECOVERY")}" must be from 1s to 1h` };
  }
  const rawPublic = get("QUARRY_PUBLIC_URL");
  let publicUrl: string | null = null;
  if (rawPublic) {
    if (!URL.canParse(rawPublic) || !/^https?:$/.test(new URL(rawPublic).protocol)) {
      return { variable: "QUARRY_PUBLIC_URL", problem: `"${rawPublic}" is not an http(s) URL` };
    }
    publicUrl = rawPublic.replace(/\/+$/, "");
  }
  return {
    ttlMs: ttlMs as number, deadlineMs: deadlineMs as number, concurrency: concurrency as number, hostConcurrency: hostConcurrency as number, recoveryMs: recoveryMs as number, publicUrl,
    pageBytes, pageLinks: pageLinks as number,
  };
}
