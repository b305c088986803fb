/** The ports of issue #32 (api.md §12): the operator's proxies, and the per-host memory of escalation. */

/** Which of the operator's proxies a read goes through (api.md §12): any (`auto`), a pool's, a country's. */
export interface ProxyChoice {
  pool?: string;
  country?: string;
}

/**
 * The operator's proxies as the core sees them (core/net/proxy-pool.ts implements it): which exist,
 * and their status for /health and /metrics, never their credentials.
 */
export interface ProxiesPort {
  readonly size: number;
  pools(): string[];
  /** How many proxies a choice has (paused ones included). */
  candidates(choice?: ProxyChoice): readonly unknown[];
  status(): Array<{ id: string; label: string; pool: string; country: string | null; protocol: string; status: "ok" | "paused"; paused_until: string | null; failures: number; requests: number; failed: number }>;
}

/** The fetch step that last worked for a host (api.md §12, escalation), while it holds. */
export interface HostStep {
  step: "static" | "render" | "proxy";
  /** ms since the epoch when it is forgotten. */
  until: number;
}

/**
 * Per-host memory of escalation, shared by every instance on the same storage (SQLite file,
 * PostgreSQL, Redis through unstorage): a crawl on two instances starts each page where the host last worked.
 */
export interface HostMemory {
  get(host: string): Promise<HostStep | null>;
  /** Remembers `step` for the host, for the operator's QUARRY_ESCALATION_TTL. */
  set(host: string, step: HostStep["step"]): Promise<void>;
}
