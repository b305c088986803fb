/**
 * Which URLs a crawl may visit, in one canonical spelling each (api.md §9).
 *
 * - `frontierKey`: the form a URL is stored and deduplicated under. Scheme and host lower-case,
 *   default port, fragment and tracking parameters dropped, remaining parameters sorted,
 *   repeated slashes collapsed, needless percent-escapes decoded. `www.` and a trailing slash
 *   are kept: sites do serve different pages there.
 * - `TrapGuard`: stops calendars and generated URLs from growing the frontier forever, without
 *   capping real sites with many numbered pages: paths deeper than 12 segments or with a segment
 *   repeated 3 times; at most 100 query strings on one path; and chains of one "shape" (the
 *   path with every number replaced by N, plus the query's parameter names) where each URL was
 *   found on the one before and steps one of its numbers by one: a calendar's "next month" or a
 *   "page=N+1" link. A chain stops after 8 hops, and a shape takes at most 50 URLs found that
 *   way, so /calendar/2031/05 and its endless neighbours end early, while numbered pages that
 *   link to other numbered pages (/p/3 → /p/31 … /p/40, /item/1 … /item/5000) are all read.
 */
import { isTrackingParam } from "../ranking/normalize-url.ts";
import type { JobSpec } from "../ports/job-model.ts";
import { compilePathPattern, type PathPattern } from "./path-patterns.ts";

export const MAX_PATH_SEGMENTS = 12;
export const MAX_QUERY_VARIANTS = 100;
export const MAX_SHAPE_CHAIN = 8;
export const MAX_CHAINED_PER_SHAPE = 50;
const MAX_URL_LENGTH = 2048;
/** URLs a guard remembers as frontier entries (`recorded`); past this, links are left to the store. */
const MAX_KNOWN = 100_000;

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
  // Each setter below re-parses the URL: only what needs changing is set (most links need nothing).
  if (u.hash || u.href.endsWith("#")) u.hash = "";
  const host = u.hostname.toLowerCase().replace(/\.$/, "");
  if (host !== u.hostname) u.hostname = host;
  const path = u.pathname;
  if (path.includes("//") || path.includes("%")) {
    u.pathname = path.replace(/\/{2,}/g, "/").replace(/%([0-9a-f]{2})/gi, (_, hex: string) => {
      const ch = String.fromCharCode(parseInt(hex, 16));
      return /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${hex.toUpperCase()}`;
    });
  }
  // With the fragment gone, a "?" can only start the query (the path has it escaped).
  if (u.href.includes("?")) {
    const kept = [...u.searchParams].filter(([name]) => !isTrackingParam(name));
    kept.sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
    u.search = kept.length ? new URLSearchParams(kept).toString() : "";
  }
  const out = u.href;
  return out.length > MAX_URL_LENGTH ? null : out;
}

export type TrapReason = "path_too_deep" | "repeated_segment" | "query_variants" | "url_pattern";

/** The URL with its numbers and its query's values left out: `/calendar/N/N`, `/search?page&q`. */
export function urlShape(u: URL): string {
  const names = [...new Set([...u.searchParams.keys()])].sort().join("&");
  return `${u.host}${u.pathname.replace(/\d+/g, "N")}${names ? `?${names}` : ""}`;
}

const numbersOf = (u: URL) => (u.pathname + u.search).match(/\d+/g)?.map(Number) ?? [];

/** One or two numbers changed and one of them by exactly one: next month (or the year's wrap), next page. */
function isStep(from: URL, to: URL): boolean {
  const a = numbersOf(from);
  const b = numbersOf(to);
  if (a.length !== b.length) return false;
  const changed = a.map((n, i) => Math.abs(n - b[i]!)).filter((d) => d > 0);
  return changed.length > 0 && changed.length <= 2 && changed.includes(1);
}

/**
 * Remembers what a job has seen; `check` says whether a new URL would be a trap, and
 * `inFrontier` whether one it let through is already in the store's frontier.
 */
export class TrapGuard {
  private readonly queries = new Map<string, number>();
  /** Each admitted URL's chain length (hops found on a page of its own shape). */
  private readonly chains = new Map<string, number>();
  private readonly chained = new Map<string, number>();

  /** URLs it let through that a committed page's transaction put in the job's frontier. */
  private readonly known = new Set<string>();

  /** True when `check` let this URL through before (it passed every other rule of the job then too). */
  admitted(url: string): boolean {
    return this.chains.has(url);
  }

  /** These URLs (let through by `check`) are frontier entries now: a committed transaction holds them. */
  recorded(urls: readonly string[]): void {
    for (const url of urls) {
      if (this.known.size >= MAX_KNOWN) return;
      if (this.chains.has(url)) this.known.add(url);
    }
  }

  /** True when the store holds this URL already (`recorded`): a link to it needs no more work. */
  inFrontier(url: string): boolean {
    return this.known.has(url);
  }

  /** `from`: the page the URL was found on. */
  check(url: string, from?: string): TrapReason | null {
    if (this.chains.has(url)) return null;
    const u = new URL(url);
    const segments = u.pathname.split("/").filter(Boolean);
    if (segments.length > MAX_PATH_SEGMENTS) return "path_too_deep";
    const seen = new Map<string, number>();
    for (const seg of segments) {
      const n = (seen.get(seg) ?? 0) + 1;
      if (n >= 3) return "repeated_segment";
      seen.set(seg, n);
    }
    const path = `${u.host}${u.pathname}`;
    const q = this.queries.get(path) ?? 0;
    if (u.search && q >= MAX_QUERY_VARIANTS) return "query_variants";
    let chain = 0;
    const shape = urlShape(u);
    if (from !== undefined && URL.canParse(from)) {
      const f = new URL(from);
      if (urlShape(f) === shape && isStep(f, u)) chain = (this.chains.get(from) ?? 0) + 1;
    }
    const sameShape = this.chained.get(shape) ?? 0;
    if (chain > MAX_SHAPE_CHAIN || (chain > 0 && sameShape >= MAX_CHAINED_PER_SHAPE)) return "url_pattern";
    if (chain > 0) this.chained.set(shape, sameShape + 1);
    if (u.search) this.queries.set(path, q + 1);
    this.chains.set(url, chain);
    return null;
  }
}

export interface ScopeRules {
  /** Host of the start URL. */
  startHost: string;
  allowSubdomains: boolean;
  allowExternal: boolean;
  include: PathPattern[];
  exclude: PathPattern[];
}

/**
 * A job's scope rules, from its spec (patterns were validated when the job was created). A job
 * stored before patterns ran on RE2 may hold one RE2 refuses (lookaround): it keeps its meaning
 * through JavaScript's engine rather than silently widening the crawl.
 */
export function scopeRules(spec: JobSpec): ScopeRules {
  const compile = (patterns: readonly string[]) =>
    patterns.flatMap((p): PathPattern[] => {
      const re = compilePathPattern(p);
      if (re) return [re];
      try {
        return [new RegExp(p)];
      } catch {
        return [];
      }
    });
  return {
    startHost: new URL(spec.url ?? "http://invalid/").hostname,
    allowSubdomains: spec.allowSubdomains,
    allowExternal: spec.allowExternal,
    include: compile(spec.includePaths),
    exclude: compile(spec.excludePaths),
  };
}

/** `example.com` and `www.example.com` are one site; `docs.example.com` is a subdomain of it. */
export function siteOf(host: string): string {
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
