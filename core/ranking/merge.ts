/**
 * Merges the per-backend result lists into one ranked, deduplicated list. The score blends
 * - agreement and position: reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009),
 *   summed over engines, so a URL two engines return beats the same URL from one;
 * - lexical match of title and snippet to the query (lexical.ts);
 * - an optional per-hostname prior (e.g. from the source registry), neutral when absent.
 * Every part is in [0, 1] and the weights are normalised, so the score is too. Ties are
 * broken by best rank, engine count and URL, so the order never depends on input order.
 */
import type { Freshness, RawResult } from "../backends/types.ts";
import { lexicalScores } from "./lexical.ts";
import { bareHost, stripTracking, urlIdentity } from "./normalize-url.ts";

export interface MergedResult {
  title: string;
  url: string;
  content: string;
  score: number;
  published_at: string | null;
  /** Hostname of `url`, without `www.`. */
  source: string;
  /** Backends that returned this page, best rank first. */
  engines: string[];
}

export interface MergeOptions {
  maxResults?: number;
  /** Keep only these hosts and their subdomains. */
  includeDomains?: readonly string[];
  /** Drop these hosts and their subdomains. */
  excludeDomains?: readonly string[];
  /** Drop results with a known date older than the window; undated results stay. Needs `now`. */
  freshness?: Freshness | null;
  /** Current time in ms (from the Clock port); required with `freshness`. */
  now?: number;
  /** Prior belief in a hostname, in [0, 1]. Without one the prior takes no part in the score. */
  hostPrior?: (hostname: string) => number;
  weights?: { rank?: number; lexical?: number; prior?: number };
  /** RRF's k: smaller values separate positions more (60 in the paper, for long lists). */
  rrfK?: number;
}

export type PerBackendResults = Readonly<Record<string, readonly RawResult[]>>;

const DAY_MS = 86_400_000;
export const FRESHNESS_MS: Record<Freshness, number> = { day: DAY_MS, week: 7 * DAY_MS, month: 30 * DAY_MS, year: 365 * DAY_MS };
const DEFAULT_WEIGHTS = { rank: 0.6, lexical: 0.3, prior: 0.1 };

interface Occurrence {
  engine: string;
  result: RawResult;
  https: boolean;
}

interface Group {
  key: string;
  host: string;
  /** Best first: lowest rank, then https, then engine name. */
  occurrences: Occurrence[];
}

/** `https://www.Example.com/x` or `example.com.` → `example.com`. */
export function normalizeDomain(domain: string): string {
  const raw = domain.trim();
  const host = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) && URL.canParse(raw) ? new URL(raw).hostname : raw.split("/")[0]!;
  return bareHost(host);
}

export function matchesDomain(host: string, domains: readonly string[]): boolean {
  return domains.some((d) => host === d || host.endsWith(`.${d}`));
}

function byBest(a: Occurrence, b: Occurrence): number {
  return a.result.rank - b.result.rank || Number(b.https) - Number(a.https) || (a.engine < b.engine ? -1 : a.engine > b.engine ? 1 : 0);
}

/** Groups results by normalised URL; an engine listing a page twice counts once, at its best rank. */
function groupResults(perBackend: PerBackendResults): Group[] {
  const groups = new Map<string, Group>();
  for (const engine of Object.keys(perBackend).sort()) {
    for (const result of perBackend[engine]!) {
      const identity = urlIdentity(result.url);
      if (!identity) continue;
      const { key, host } = identity;
      let group = groups.get(key);
      if (!group) groups.set(key, (group = { key, host, occurrences: [] }));
      const same = group.occurrences.findIndex((o) => o.engine === engine);
      const occurrence = { engine, result, https: result.url.startsWith("https:") };
      if (same === -1) group.occurrences.push(occurrence);
      else if (result.rank < group.occurrences[same]!.result.rank) group.occurrences[same] = occurrence;
    }
  }
  for (const group of groups.values()) group.occurrences.sort(byBest);
  return [...groups.values()];
}

function firstDate(group: Group): string | null {
  return group.occurrences.find((o) => o.result.published_at !== null)?.result.published_at ?? null;
}

export function mergeResults(perBackend: PerBackendResults, query: string, opts: MergeOptions = {}): MergedResult[] {
  if (opts.freshness && opts.now === undefined) throw new TypeError("mergeResults: freshness needs opts.now");
  const include = (opts.includeDomains ?? []).map(normalizeDomain).filter(Boolean);
  const exclude = (opts.excludeDomains ?? []).map(normalizeDomain).filter(Boolean);
  const oldest = opts.freshness ? opts.now! - FRESHNESS_MS[opts.freshness] : null;

  const groups = groupResults(perBackend).filter((g) => {
    if (include.length && !matchesDomain(g.host, include)) return false;
    if (exclude.length && matchesDomain(g.host, exclude)) return false;
    if (oldest !== null) {
      const at = Date.parse(firstDate(g) ?? "");
      if (!Number.isNaN(at) && at < oldest) return false;
    }
    return true;
  });

  const merged = groups.map((g) => {
    const best = g.occurrences[0]!.result;
    const content = g.occurrences.reduce((longest, o) => (o.result.content.length > longest.length ? o.result.content : longest), "");
    const title = g.occurrences.find((o) => o.result.title)?.result.title ?? "";
    return { group: g, title, content, url: stripTracking(best.url) };
  });

  const k = opts.rrfK ?? 10;
  const engineCount = Object.values(perBackend).filter((list) => list.length > 0).length;
  const rrfMax = engineCount / (k + 1);
  const lexical = lexicalScores(query, merged);
  const w = { ...DEFAULT_WEIGHTS, ...opts.weights };
  const priorWeight = opts.hostPrior ? w.prior : 0;
  const weightSum = w.rank + w.lexical + priorWeight || 1;

  const scored = merged.map((m, i) => {
    const rrf = m.group.occurrences.reduce((sum, o) => sum + 1 / (k + Math.max(1, o.result.rank)), 0);
    const prior = opts.hostPrior ? Math.min(1, Math.max(0, opts.hostPrior(m.group.host) || 0)) : 0;
    const raw = (w.rank * Math.min(1, rrf / rrfMax) + w.lexical * lexical[i]! + priorWeight * prior) / weightSum;
    return { m, score: Math.round(Math.min(1, Math.max(0, raw)) * 10_000) / 10_000 };
  });

  scored.sort(
    (a, b) =>
      b.score - a.score ||
      a.m.group.occurrences[0]!.result.rank - b.m.group.occurrences[0]!.result.rank ||
      b.m.group.occurrences.length - a.m.group.occurrences.length ||
      (a.m.group.key < b.m.group.key ? -1 : a.m.group.key > b.m.group.key ? 1 : 0),
  );

  const limit = opts.maxResults ?? scored.length;
  return scored.slice(0, Math.max(0, limit)).map(({ m, score }) => ({
    title: m.title,
    url: m.url,
    content: m.content,
    score,
    published_at: firstDate(m.group),
    source: m.group.host,
    engines: m.group.occurrences.map((o) => o.engine),
  }));
}
