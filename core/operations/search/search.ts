/**
 * POST /v1/search (api.md §§5–6, 8): ask the web backends at once under one deadline (with the
 * topic, country and date hints each can take), merge and rank what came back, filter by date,
 * and read pages (through the guarded page port) for the tier's excerpts and for what the
 * options ask: whole content, chunks, images, an answer. A page that is late leaves its parts null.
 */
import { loadLibraries } from "../../lazy.ts";
import { countTokens } from "../../budget/tokens.ts";
import { describeStatuses, failedRunExtra } from "../../backends/runner.ts";
import type { RawResult } from "../../backends/types.ts";
import { collectionsAsEngines, missing } from "../../collections/service.ts";
import { ApiError } from "../../errors.ts";
import { mergeResults, type MergedResult } from "../../ranking/merge.ts";
import { isCollectionDocUrl } from "../../ranking/normalize-url.ts";
import type { Ports } from "../../ports.ts";
import type { Services } from "../../services.ts";
import { writeAnswer } from "./answer.ts";
import { filterByDate } from "./dates.ts";
import { planSearch, type Ignored, type SearchPlan } from "./plan.ts";
import { byDeadline, readPage, type PageRead } from "./read.ts";
import { backendExtras, collectImages, resultFavicon, type SearchImageItem } from "./results.ts";
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
/** Pages an answer is written from when the tier reads none. */
const ANSWER_PAGES = 5;
/** Undated results whose pages are read for a date when a date range is asked. */
const UNDATED_PAGES = 10;
const CACHE_TTL_SECONDS = 10 * 60;
/**
 * A partial answer (an engine failed, timed out or was paused) is kept a minute, not ten: a burst of
 * the same request still gets the copy, and the recovered engine is asked again soon after.
 */
const PARTIAL_CACHE_TTL_SECONDS = 60;

/** A merged result plus what was read from its page. */
export interface SearchResultItem extends MergedResult {
  excerpt: string | null;
  raw_content: string | null;
  chunks?: string[];
  favicon?: string | null;
}

export interface SearchResponse {
  meta: {
    query: string;
    results_count: number;
    tokens_used: number;
    duration_ms: number;
    cached: boolean;
    backends: Record<string, { status: string; results: number; latency_ms: number; error?: string }>;
    topic?: "general" | "news";
    country?: string | null;
    undated?: "kept" | "dropped";
    date_filter?: { start_date: string | null; end_date: string | null; out_of_range: number; undated: number; dated_from_pages: number };
    answer?: "extractive" | "llm";
    /** When pages were read: how many were, and each that could not be, with why. */
    pages?: { read: number; failed: Array<{ url: string; reason: string }> };
    ignored: Ignored[];
  };
  answer?: string | null;
  images?: SearchImageItem[];
  results: SearchResultItem[];
}

function cacheKey(req: SearchRequest, account: string | undefined): string {
  // An answer from an account's collections is that account's alone.
  const norm = { ...req, ...(req.collections?.length ? { account: account ?? null } : {}), include_domains: req.include_domains?.slice().sort(), exclude_domains: req.exclude_domains?.slice().sort(), backends: req.backends?.slice().sort() };
  return `search:${JSON.stringify(norm)}`;
}

async function hostPriors(ports: Ports, hosts: string[]): Promise<Map<string, number>> {
  const stats = await Promise.all(hosts.map((h) => ports.sources.get(h).catch(() => null)));
  // Laplace-smoothed fetch success: unknown hosts sit at 0.5.
  return new Map(hosts.map((h, i) => [h, stats[i] ? (stats[i]!.fetch_ok + 1) / (stats[i]!.fetch_ok + stats[i]!.fetch_failed + 2) : 0.5]));
}

function hostOf(url: string): string {
  if (isCollectionDocUrl(url)) return "";
  try {
    return new URL(url).hostname.replace(/^www\./, "");
  } catch {
    return "";
  }
}

/** How many of the results' pages to read: the tier's, an answer's, or all that the options need. */
function pagesToRead(req: SearchRequest, plan: SearchPlan, results: number): number {
  if (plan.readAll) return results;
  return Math.max(TIER_READS[req.tier].pages, plan.answer ? ANSWER_PAGES : 0);
}

export async function search(ports: Ports, services: Services, req: SearchRequest, account?: string): Promise<SearchResponse> {
  await loadLibraries();
  const t0 = performance.now();
  const key = cacheKey(req, account);
  // An answer with the account's collections is what they hold now: a document just added is found at once.
  const cacheable = !req.collections?.length;
  const cached = cacheable ? await ports.cache.get<SearchResponse>(key) : null;
  if (cached) return { ...cached, meta: { ...cached.meta, cached: true, duration_ms: Math.round(performance.now() - t0) } };

  const started = ports.clock.now();
  const plan = planSearch(req, services.registry, started);
  // A date range may read undated results' pages for their dates.
  const reads = plan.readAll || plan.answer || plan.range;
  // An embedder (or a test) may shorten every tier's deadline with services.deadlines.search.
  const total = Math.min(req.tier === "basic" && reads ? TIER_DEADLINE_MS.summary : TIER_DEADLINE_MS[req.tier], services.deadlines.search ?? Infinity);
  const deadline = started + total;
  // Reading pages needs part of the deadline: the engines then get at most 60 % of it.
  const engineDeadline = req.tier === "basic" && !reads ? deadline : started + Math.round(total * 0.6);
  const web = req.web === false ? { results: {}, backends: {} } : await services.runner.run<RawResult>({
    query: { query: req.query, maxResults: Math.min(20, req.max_results * 2), language: req.language, ...plan.hints, freshness: plan.hints.freshness ?? null },
    backends: req.backends,
    kind: "web",
    deadline: engineDeadline,
    skip: plan.skip,
  });
  const own = req.collections?.length ? await collectionsAsEngines(ports.collections, account ?? "", req.collections, req.query, Math.min(20, req.max_results * 2), services.collectionRerank) : { results: {}, backends: {} };
  if (req.web === false && Object.values(own.backends).every((b) => b.status === "error")) throw missing(req.collections![0]!);
  const outcome = { results: { ...web.results, ...own.results }, backends: { ...web.backends, ...own.backends } };
  const statuses = outcome.backends;
  const tried = Object.entries(statuses).filter(([, s]) => s.status !== "disabled" && s.status !== "skipped");
  const answered = tried.filter(([, s]) => s.status === "ok");
  if (answered.length === 0) {
    const named = describeStatuses(statuses);
    if (tried.length > 0 && tried.every(([, s]) => s.status === "timeout")) {
      throw new ApiError("timeout", `No search backend answered before the deadline: ${named}.`, failedRunExtra(statuses, ports.clock.now()));
    }
    throw new ApiError("upstream_error", tried.length ? `Every search backend failed: ${named}.` : `No search backend could be asked: ${named}.`, failedRunExtra(statuses, ports.clock.now()));
  }

  for (const [id, results] of Object.entries(outcome.results)) {
    for (const r of results) {
      // A collection's document cited by its quarry: URL is no site of the web.
      if (isCollectionDocUrl(r.url)) continue;
      try {
        await ports.sources.record(new URL(r.url).hostname, { backend: id });
      } catch {
        // a result URL we cannot parse, or the registry is down: ranking goes on without it
      }
    }
  }
  const hosts = [...new Set(Object.values(outcome.results).flat().map((r) => hostOf(r.url)).filter(Boolean))];
  const priors = await hostPriors(ports, hosts);
  let merged: MergedResult[] = mergeResults(outcome.results, req.query, {
    includeDomains: req.include_domains,
    excludeDomains: req.exclude_domains,
    freshness: plan.freshness,
    now: ports.clock.now(),
    hostPrior: (h) => priors.get(h) ?? 0.5,
  });
  const wants = {
    query: req.query,
    excerptTokens: TIER_READS[req.tier].tokens,
    raw: plan.raw ?? (req.tier === "full" ? ("markdown" as const) : null),
    chunks: plan.chunks,
    media: plan.images || plan.favicon,
  };
  const read = new Map<string, Promise<PageRead | null>>();
  // Pages that could not be read, and why: an excerpt missing for a reason is said in meta.pages.
  const unread = new Map<string, string>();
  const readOnce = (url: string): Promise<PageRead | null> => {
    // A collection's own document is not fetched: its passages are the result's content.
    if (isCollectionDocUrl(url)) return Promise.resolve(null);
    if (!read.has(url)) {
      const late = (p: PageRead | null) => (p === null && !unread.has(url) && unread.set(url, "not read before the deadline"), p);
      read.set(url, byDeadline(readPage(ports, url, wants, deadline, unread), ports, deadline).then(late));
    }
    return read.get(url)!;
  };
  let datedFromPages = 0;
  if (plan.range) {
    // Results the engines gave no date may state one on their page: read the best few, as the
    // tier would, and take the page's date, so a known date is not thrown away as unknown.
    const undated = merged.filter((r) => r.published_at === null).slice(0, Math.min(UNDATED_PAGES, req.max_results * 2));
    const found = await Promise.all(undated.map((r) => readOnce(r.url)));
    undated.forEach((r, i) => {
      if (found[i]?.published_at) {
        r.published_at = found[i]!.published_at;
        datedFromPages++;
      }
    });
  }
  const dated = plan.range ? filterByDate(merged, plan.range, req.undated) : null;
  if (dated) merged = dated.kept;
  merged = merged.slice(0, req.max_results);

  const toRead = pagesToRead(req, plan, merged.length);
  const pages: (PageRead | null)[] = await Promise.all(
    merged.map((r, i) => (i < toRead || read.has(r.url) ? readOnce(r.url) : Promise.resolve(null))),
  );

  const extras = backendExtras(outcome.results);
  let tokens = 0;
  const results: SearchResultItem[] = merged.map((r, i) => {
    const page = pages[i];
    const item: SearchResultItem = { ...r, excerpt: page?.excerpt ?? null, raw_content: page?.raw ?? null };
    if (plan.chunks !== null) item.chunks = page?.chunks ?? [];
    if (plan.favicon) item.favicon = resultFavicon(r.url, page, extras);
    if (item.excerpt) tokens += countTokens(item.excerpt);
    if (item.raw_content) tokens += countTokens(item.raw_content);
    for (const c of item.chunks ?? []) tokens += countTokens(c);
    return item;
  });

  const ignored = [...plan.ignored];
  const body: SearchResponse = {
    meta: {
      query: req.query, results_count: results.length, tokens_used: 0, duration_ms: 0, cached: false, backends: statuses,
      ...(req.topic !== "general" ? { topic: plan.topic } : {}),
      ...(req.country ? { country: plan.country } : {}),
      ...(plan.range && dated
        ? { undated: req.undated === "keep" ? ("kept" as const) : ("dropped" as const), date_filter: { ...plan.range, out_of_range: dated.outOfRange, undated: dated.undated, dated_from_pages: datedFromPages } }
        : {}),
      ...(read.size ? { pages: { read: read.size - unread.size, failed: [...unread].map(([url, reason]) => ({ url, reason })) } } : {}),
      ignored,
    },
    results,
  };
  if (plan.answer) {
    const sources = results.map((r, i) => ({ title: r.title, url: r.url, text: pages[i]?.text || r.content }));
    const llm = services.llm;
    const answer = await writeAnswer({ fetch: services.fetch, llm, timeoutMs: Math.min(services.llmTimeoutMs ?? 20_000, 15_000) }, req.query, sources, plan.answer);
    body.answer = answer.text;
    body.meta.answer = answer.method;
    if (answer.text) tokens += countTokens(answer.text);
    tokens += answer.tokens;
    if (answer.llmError) ignored.push({ option: "include_answer", reason: `the model's answer could not be used (${answer.llmError}); the answer is extractive` });
    if (!answer.text) ignored.push({ option: "include_answer", reason: "no sentence of the results' text answers the query well enough to cite: answer is null" });
  }
  if (plan.images) body.images = collectImages(results, pages, extras, req.include_image_descriptions);
  body.meta.tokens_used = tokens;
  body.meta.duration_ms = Math.round(performance.now() - t0);
  const partial = answered.length < tried.length || Object.values(statuses).some((st) => st.retry_at);
  if (cacheable) await ports.cache.set(key, body, partial ? PARTIAL_CACHE_TTL_SECONDS : CACHE_TTL_SECONDS).catch(() => {});
  return body;
}
