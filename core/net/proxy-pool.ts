/**
 * The operator's proxies (`QUARRY_PROXIES`, api.md §12): parsing, rotation per host, and pausing
 * a proxy that fails, like a failing backend. Pure: the adapters connect through the entries
 * (adapters/fetch for page fetches, adapters/browser for the browser's contexts).
 *
 * Credentials live only in `ProxyEntry.url`, which is never put in a message, a log line, a
 * status or a metric: everything shown uses `label` (`de:residential http://proxy.example:8080`).
 */

/** HTTP(S)_PROXY / NO_PROXY (core/config.ts `parseProxyEnv`): one process-wide proxy, the older way. */
export interface ProxySettings {
  http?: string;
  https?: string;
  noProxy?: string;
}

export type ProxyProtocol = "http:" | "https:" | "socks5:";

export interface ProxyEntry {
  /** `p1`, `p2`, … in the order listed: stable names for status and metrics. */
  id: string;
  /** What may be shown: country, pool, scheme, host and port; never the credentials. */
  label: string;
  /** The proxy URL with its credentials: for the adapters' connections only. */
  url: string;
  protocol: ProxyProtocol;
  /** ISO 3166-1 alpha-2, lowercase; null when untagged. */
  country: string | null;
  pool: string;
}

export const DEFAULT_POOL = "default";
const PROTOCOLS: readonly string[] = ["http:", "https:", "socks5:", "socks5h:"];

export class ProxyListError extends Error {}

/**
 * `QUARRY_PROXIES`: entries separated by commas, spaces or newlines, each `[country][:pool]=url`
 * or a bare URL: `de:residential=http://user:pass@de.example:8080, :dc=socks5://10.0.0.5:1080,
 * https://proxy.example:8443`. A two-letter prefix is a country, anything else a pool name.
 * Credentials that contain a comma or space are percent-encoded, as in any URL.
 */
export function parseProxies(text: string | undefined): ProxyEntry[] {
  const items = (text ?? "").split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);
  return items.map((item, i) => {
    const at = item.indexOf("://");
    const eq = item.indexOf("=");
    const tagged = eq > 0 && (at < 0 || eq < at);
    const tags = tagged ? item.slice(0, eq) : "";
    const raw = tagged ? item.slice(eq + 1) : item;
    const [first, second] = tags.split(":");
    let country: string | null = null;
    let pool = DEFAULT_POOL;
    if (tags.includes(":")) {
      country = first || null;
      pool = second || DEFAULT_POOL;
    } else if (/^[a-z]{2}$/i.test(first ?? "")) country = first!;
    else if (first) pool = first;
    const where = `entry ${i + 1}`;
    if (country !== null && !/^[a-z]{2}$/i.test(country)) throw new ProxyListError(`${where}: "${country}" is not a two-letter country code`);
    if (!/^[a-z0-9][a-z0-9_-]{0,31}$/i.test(pool)) throw new ProxyListError(`${where}: "${pool}" is not a pool name (letters, digits, - and _)`);
    if (pool === "none" || pool === "auto") throw new ProxyListError(`${where}: "${pool}" is reserved (proxy: "none" and "auto" are request values)`);
    if (!URL.canParse(raw)) throw new ProxyListError(`${where} is not a proxy URL such as http://user:pass@host:port`);
    const url = new URL(raw);
    if (!PROTOCOLS.includes(url.protocol)) throw new ProxyListError(`${where}: ${url.protocol}// proxies are not supported; use http://, https:// or socks5://`);
    if (!url.hostname || !url.port && url.protocol.startsWith("socks")) throw new ProxyListError(`${where}: a proxy URL needs a host${url.protocol.startsWith("socks") ? " and a port" : ""}`);
    const protocol: ProxyProtocol = url.protocol === "socks5h:" ? "socks5:" : (url.protocol as ProxyProtocol);
    const c = country?.toLowerCase() ?? null;
    const label = `${c ?? ""}${pool === DEFAULT_POOL ? "" : `:${pool}`}${c || pool !== DEFAULT_POOL ? " " : ""}${protocol}//${url.host}`;
    return { id: `p${i + 1}`, label, url: url.href, protocol, country: c, pool };
  });
}

/** What a read asks of the pool: any proxy (`auto`), or one pool's, maybe of one country. */
export interface ProxyAsk {
  /** A pool name; absent = any pool. */
  pool?: string;
  country?: string;
}

export interface ProxyStatus {
  id: string;
  label: string;
  pool: string;
  country: string | null;
  protocol: string;
  status: "ok" | "paused";
  /** ISO time the pause ends; null when not paused. */
  paused_until: string | null;
  /** Failures in a row (reset by a success). */
  failures: number;
  requests: number;
  failed: number;
}

export interface ProxyPoolOptions {
  /** First pause of a failing proxy; doubles with each failure in a row, up to `maxPauseMs`. Default 30 s. */
  pauseMs?: number;
  maxPauseMs?: number;
  now?: () => number;
}

interface State {
  failures: number;
  pausedUntil: number;
  requests: number;
  failed: number;
}

const MAX_HOSTS = 10_000;

export class ProxyPool {
  private readonly state = new Map<string, State>();
  /** Per host, the turn of its next read: successive reads of one host take successive proxies. */
  private readonly turns = new Map<string, number>();
  private readonly pauseMs: number;
  private readonly maxPauseMs: number;
  private readonly now: () => number;

  constructor(readonly entries: readonly ProxyEntry[], options: ProxyPoolOptions = {}) {
    this.pauseMs = options.pauseMs ?? 30_000;
    this.maxPauseMs = options.maxPauseMs ?? 10 * 60_000;
    this.now = options.now ?? Date.now;
    for (const e of entries) this.state.set(e.id, { failures: 0, pausedUntil: 0, requests: 0, failed: 0 });
  }

  get size(): number {
    return this.entries.length;
  }

  /** The proxies a read may use, paused or not. */
  candidates(ask: ProxyAsk = {}): ProxyEntry[] {
    const country = ask.country?.toLowerCase();
    return this.entries.filter((e) => (!ask.pool || e.pool === ask.pool) && (!country || e.country === country));
  }

  pools(): string[] {
    return [...new Set(this.entries.map((e) => e.pool))];
  }

  /**
   * The next proxy for a read of `host`: the candidates not paused, in turn per host. Null when
   * there are none, or every one is paused (`paused` then says so).
   */
  pick(host: string, ask: ProxyAsk = {}, skip: ReadonlySet<string> = new Set()): { entry: ProxyEntry | null; paused: number } {
    const now = this.now();
    const all = this.candidates(ask).filter((e) => !skip.has(e.id));
    const live = all.filter((e) => this.state.get(e.id)!.pausedUntil <= now);
    if (!live.length) return { entry: null, paused: all.length };
    if (this.turns.size >= MAX_HOSTS && !this.turns.has(host)) this.turns.clear();
    const turn = this.turns.get(host) ?? 0;
    this.turns.set(host, turn + 1);
    const entry = live[turn % live.length]!;
    this.state.get(entry.id)!.requests++;
    return { entry, paused: all.length - live.length };
  }

  /** The proxy itself failed (could not be reached, refused us, dropped the tunnel): paused, longer each time in a row. */
  failed(entry: ProxyEntry): void {
    const s = this.state.get(entry.id);
    if (!s) return;
    s.failures++;
    s.failed++;
    s.pausedUntil = this.now() + Math.min(this.maxPauseMs, this.pauseMs * 2 ** (s.failures - 1));
  }

  succeeded(entry: ProxyEntry): void {
    const s = this.state.get(entry.id);
    if (!s) return;
    s.failures = 0;
    s.pausedUntil = 0;
  }

  status(): ProxyStatus[] {
    const now = this.now();
    return this.entries.map((e) => {
      const s = this.state.get(e.id)!;
      const paused = s.pausedUntil > now;
      return {
        id: e.id, label: e.label, pool: e.pool, country: e.country, protocol: e.protocol.replace(":", ""),
        status: paused ? "paused" : "ok", paused_until: paused ? new Date(s.pausedUntil).toISOString() : null,
        failures: s.failures, requests: s.requests, failed: s.failed,
      };
    });
  }
}
