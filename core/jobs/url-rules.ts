/**
 * Which URLs a crawl may visit, in one canonical spelling each (api.md §9).
 *
 * - `frontierKey`: the form a URL is stored and deduplicated under. Scheme and host lower-case,
 *   default port, fragment and tracking parameters dropped, remaining parameters sorted,
 *   repeated slashes collapsed, needless percent-escapes decoded. `www.` and a trailing slash
 *   are kept: sites do serve different pages there.
 * - `TrapGuard`: caps that stop calendars and generated URLs from growing the frontier forever:
 *   paths deeper than 12 segments or with a segment repeated 3 times, query strings on one path
 *   (at most 10 variants), and "shapes" (the path with every number replaced by N; at most 25
 *   URLs per shape, so /calendar/2031/05/17 and its endless neighbours stop early).
 */
import { isTrackingParam } from "../ranking/normalize-url.ts";

export const MAX_PATH_SEGMENTS = 12;
export const MAX_QUERY_VARIANTS = 10;
export const MAX_PER_SHAPE = 25;
const MAX_URL_LENGTH = 2048;

/** The canonical form of an http(s) URL, or null when it is not one a crawl could fetch. */
export function frontierKey(input: string, base?: string): string | null {
  let u: URL;
  try {
    u = base === undefined ? new URL(input) : new URL(input, base);
  } catch {
    return null;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return null;
  if (u.username || u.password) return null;
  u.hash = "";
  u.hostname = u.hostname.toLowerCase().replace(/\.$/, "");
  u.pathname = u.pathname.replace(/\/{2,}/g, "/").replace(/%([0-9a-f]{2})/gi, (_, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
  const kept = [...u.searchParams].filter(([name]) => !isTrackingParam(name));
  kept.sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  u.search = kept.length ? new URLSearchParams(kept).toString() : "";
  const out = u.href;
  return out.length > MAX_URL_LENGTH ? null : out;
}

export type TrapReason = "path_too_deep" | "repeated_segment" | "query_variants" | "url_pattern";

/** Remembers what a job has seen; `check` says whether a new URL would be a trap. */
export class TrapGuard {
  private readonly queries = new Map<string, number>();
  private readonly shapes = new Map<string, number>();
  /** URLs already counted (a link seen on many pages counts once). */
  private readonly counted = new Set<string>();

  /** Counts a URL the frontier already holds (on resume), without judging it. */
  note(url: string): void {
    this.check(url, true);
  }

  check(url: string, force = false): TrapReason | null {
    if (this.counted.has(url)) return null;
    const u = new URL(url);
    const segments = u.pathname.split("/").filter(Boolean);
    if (!force) {
      if (segments.length > MAX_PATH_SEGMENTS) return "path_too_deep";
      const seen = new Map<string, number>();
      for (const s of segments) {
        const n = (seen.get(s) ?? 0) + 1;
        if (n >= 3) return "repeated_segment";
        seen.set(s, n);
      }
    }
    const path = `${u.host}${u.pathname}`;
    const shape = `${u.host}${u.pathname.replace(/\d+/g, "N")}${u.search ? "?" : ""}`;
    const q = this.queries.get(path) ?? 0;
    const s = this.shapes.get(shape) ?? 0;
    if (!force && u.search && q >= MAX_QUERY_VARIANTS) return "query_variants";
    if (!force && /\d/.test(u.pathname + u.search) && s >= MAX_PER_SHAPE) return "url_pattern";
    if (u.search) this.queries.set(path, q + 1);
    this.shapes.set(shape, s + 1);
    this.counted.add(url);
    return null;
  }
}

export interface ScopeRules {
  /** Host of the start URL. */
  startHost: string;
  allowSubdomains: boolean;
  allowExternal: boolean;
  include: RegExp[];
  exclude: RegExp[];
}

/** `example.com` and `www.example.com` are one site; `docs.example.com` is a subdomain of it. */
function siteOf(host: string): string {
  return host.replace(/^www\./, "");
}

export type OutOfScope = "external" | "subdomain" | "excluded" | "not_included";

/** Why a URL is outside the crawl's scope, or null when it is inside. */
export function outOfScope(url: string, rules: ScopeRules): OutOfScope | null {
  const u = new URL(url);
  const host = u.hostname;
  const site = siteOf(rules.startHost);
  if (siteOf(host) !== site) {
    if (host.endsWith(`.${site}`)) {
      if (!rules.allowSubdomains && !rules.allowExternal) return "subdomain";
    } else if (!rules.allowExternal) {
      return "external";
    }
  }
  const path = u.pathname;
  if (rules.exclude.some((re) => re.test(path))) return "excluded";
  if (rules.include.length && !rules.include.some((re) => re.test(path))) return "not_included";
  return null;
}

/** Compiles the user's path patterns; a bad one is reported by index. */
export function compilePatterns(patterns: readonly string[], field: string): RegExp[] | { error: string } {
  const out: RegExp[] = [];
  for (const [i, p] of patterns.entries()) {
    try {
      out.push(new RegExp(p));
    } catch {
      return { error: `${field}[${i}] is not a valid regular expression` };
    }
  }
  return out;
}
