/**
 * POST /v1/search (api.md §§5–6): ask the web backends at once under one deadline, merge and
 * rank what came back, and for the higher tiers read the top pages (through the guarded page
 * port) into query-focused excerpts. A page that is late leaves its excerpt null.
 */
import { loadLibraries } from "../../lazy.ts";
import { countTokens, truncateToTokens } from "../../budget/tokens.ts";
import { describeStatuses } from "../../backends/runner.ts";
import type { RawResult } from "../../backends/types.ts";
import { ApiError } from "../../errors.ts";
import { extractPage } from "../../extract/run.ts";
import { mergeResults, type MergedResult } from "../../ranking/merge.ts";
import type { Ports } from "../../ports.ts";
import type { Services } from "../../services.ts";
import { queryExcerpt } from "./excerpt.ts";
import type { SearchRequest } from "./schema.ts";

/** Pages read and tokens per excerpt, by tier (api.md §5). */
export const TIER_READS = {
  basic: { pages: 0, tokens: 0 },
  summary: { pages: 5, tokens: 200 },
  detailed: { pages: 10, tokens: 800 },
  full: { pages: 10, tokens: 4000 },
} as const;
/** The request's one deadline, by tier: reading pages needs more time. */
export const TIER_DEADLINE_MS = { basic: 5_000, summary: 10_000, detailed: 12_000, full: 15_000 } as const;
const CACHE_TTL_SECONDS = 10 * 60;

/** A merged result plus what the tier read from its page. */
export interface SearchResultItem extends MergedResult {
  excerpt: string | null;
  raw_content: string | null;
}

export interface SearchResponse {
  meta: {
    query: string;
    results_count: number;
    tokens_used: number;
    duration_ms: number;
    cached: boolean;
    backends: Record<string, { status: string; results: number; latency_ms: number; error?: string }>;
  };
  results: SearchResultItem[];
}

function cacheKey(req: SearchRequest): string {
  const norm = { ...req, include_domains: req.include_domains?.slice().sort(), exclude_domains: req.exclude_domains?.slice().sort(), backends: req.backends?.slice().sort() };
  return `search:${JSON.stringify(norm)}`;
}

async function hostPriors(ports: Ports, hosts: string[]): Promise<Map<string, number>> {
  const stats = await Promise.all(hosts.map((h) => ports.sources.get(h).catch(() => null)));
  // Laplace-smoothed fetch success: unknown hosts sit at 0.5.
  return new Map(hosts.map((h, i) => [h, stats[i] ? (stats[i]!.fetch_ok + 1) / (stats[i]!.fetch_ok + stats[i]!.fetch_failed + 2) : 0.5]));
}

/** Reads one page into (excerpt, raw markdown); null when it fails or misses the deadline. */
async function readPage(ports: Ports, url: string, query: string, tier: SearchRequest["tier"], deadline: number) {
  const left = deadline - ports.clock.now();
  if (left < 200) return null;
  const host = new URL(url).hostname;
  try {
    const page = await ports.pages.fetchPage(url, { timeoutMs: Math.min(left, 8_000) });
    const type = (page.contentType ?? "").toLowerCase();
    if (page.status >= 400 || !(type.includes("html") || type === "")) {
      await ports.sources.record(host, { fetched: true, ok: false }).catch(() => {});
      return null;
    }
    const content = await extractPage(ports, { body: page.body, contentType: page.contentType, url: page.finalUrl, onlyMainContent: true });
    await ports.sources.record(host, { fetched: true, ok: true }).catch(() => {});
    const budget = TIER_READS[tier].tokens;
    return {
      excerpt: queryExcerpt(content.text, query, Math.min(budget, 800)) || null,
      raw: tier === "full" ? truncateToTokens(content.markdown, 4000) : null,
    };
  } catch {
    await ports.sources.record(host, { fetched: true, ok: false }).catch(() => {});
    return null;
  }
}

/** Settles with null at the deadline, so one slow page never delays the answer. */
function byDeadline<T>(p: Promise<T | null>, ports: Ports, deadline: number): Promise<T | null> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(null), Math.max(0, deadline - ports.clock.now()));
    p.then((v) => resolve(v), () => resolve(null)).finally(() => clearTimeout(t));
  });
}

export async function search(ports: Ports, services: Services, req: SearchRequest): Promise<SearchResponse> {
  await loadLibraries();
  const t0 = performance.now();
  const key = cacheKey(req);
  const cached = await ports.cache.get<SearchResponse>(key);
  if (cached) return { ...cached, meta: { ...cached.meta, cached: true, duration_ms: Math.round(performance.now() - t0) } };

  const started = ports.clock.now();
  const deadline = started + TIER_DEADLINE_MS[req.tier];
  // Reading pages needs part of the deadline: the engines get at most two thirds of it.
  const engineDeadline = req.tier === "basic" ? deadline : started + Math.round(TIER_DEADLINE_MS[req.tier] * 0.6);
  const outcome = await services.runner.run<RawResult>({
    query: { query: req.query, maxResults: Math.min(20, req.max_results * 2), language: req.language, freshness: req.freshness ?? null },
    backends: req.backends,
    kind: "web",
    deadline: engineDeadline,
  });
  const statuses = outcome.backends;
  const tried = Object.entries(statuses).filter(([, s]) => s.status !== "disabled" && s.status !== "skipped");
  const answered = tried.filter(([, s]) => s.status === "ok");
  if (answered.length === 0) {
    const named = describeStatuses(statuses);
    if (tried.length > 0 && tried.every(([, s]) => s.status === "timeout")) {
      throw new ApiError("timeout", `No search backend answered before the deadline: ${named}.`);
    }
    throw new ApiError("upstream_error", tried.length ? `Every search backend failed: ${named}.` : `No search backend could be asked: ${named}.`);
  }

  for (const [id, results] of Object.entries(outcome.results)) {
    for (const r of results) {
      try {
        await ports.sources.record(new URL(r.url).hostname, { backend: id });
      } catch {
        // a result URL we cannot parse, or the registry is down: ranking goes on without it
      }
    }
  }
  const hosts = [...new Set(Object.values(outcome.results).flat().map((r) => { try { return new URL(r.url).hostname.replace(/^www\./, ""); } catch { return ""; } }).filter(Boolean))];
  const priors = await hostPriors(ports, hosts);
  const merged: MergedResult[] = mergeResults(outcome.results, req.query, {
    maxResults: req.max_results,
    includeDomains: req.include_domains,
    excludeDomains: req.exclude_domains,
    freshness: req.freshness ?? null,
    now: ports.clock.now(),
    hostPrior: (h) => priors.get(h) ?? 0.5,
  });

  const reads = TIER_READS[req.tier].pages;
  const pages = await Promise.all(
    merged.map((r, i) => (i < reads ? byDeadline(readPage(ports, r.url, req.query, req.tier, deadline), ports, deadline) : Promise.resolve(null))),
  );
  let tokens = 0;
  const results: SearchResultItem[] = merged.map((r, i) => {
    const page = pages[i];
    const excerpt = page?.excerpt ?? null;
    const raw = page?.raw ?? null;
    if (excerpt) tokens += countTokens(excerpt);
    if (raw) tokens += countTokens(raw);
    return { ...r, excerpt, raw_content: raw };
  });
  const body: SearchResponse = {
    meta: { query: req.query, results_count: results.length, tokens_used: tokens, duration_ms: Math.round(performance.now() - t0), cached: false, backends: statuses },
    results,
  };
  await ports.cache.set(key, body, CACHE_TTL_SECONDS).catch(() => {});
  return body;
}
