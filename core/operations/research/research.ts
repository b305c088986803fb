/**
 * POST /v1/research (api.md §6): plan sub-queries, search them at once through the shared
 * runner, pool and deduplicate the results, read the top pages, rank their passages and write
 * a report whose every sentence cites its sources. `onProgress` reports each stage (SSE).
 */
import { loadLibraries } from "../../lazy.ts";
import { describeStatuses, failedRunExtra, type BackendRunner, type BackendRunStatus, type RunOutcome } from "../../backends/runner.ts";
import type { RawResult } from "../../backends/types.ts";
import { countTokens, truncateToTokens } from "../../budget/tokens.ts";
import { ApiError } from "../../errors.ts";
import type { FetchPort, Ports } from "../../ports.ts";
import { mergeResults } from "../../ranking/merge.ts";
import { queryExcerpt } from "../../answers/excerpt.ts";
import { modelOf, rankPassages, type Passage, type SourceText } from "../../answers/evidence.ts";
import { type QuestionModel, type Semantic } from "../../answers/relevance.ts";
import { docSentences } from "../../answers/sentences.ts";
import { EmbeddingsError, questionSimilarity, type EmbeddingsConfig } from "./embeddings.ts";
import { chat, LlmError, parseModelReport, supportIndex, synthesisMessages, verifyReport, type LlmConfig } from "../../answers/llm.ts";
import { parseModelQueries, planPrompt, planSubQueries } from "./plan.ts";
import { readPages, type PageOutcome } from "./read.ts";
import type { Progress, ResearchRequest, ResearchResponse } from "./schema.ts";
import { citeSentence, extractiveReport, type Report } from "../../answers/synthesis.ts";
import { TIER_PLAN, type TierPlan } from "./tiers.ts";
import { checkCollections, nothingFound, searchCollections, type CollectionRuns } from "./collections.ts";
import { isCollectionDocUrl, stripTracking } from "../../ranking/normalize-url.ts";

export interface ResearchDeps {
  ports: Ports;
  /** The shared web runner (circuit breakers see research's searches too). */
  runner: BackendRunner;
  /** The egress-policed fetch (the LLM is a configured upstream). */
  fetch: FetchPort;
  llm: LlmConfig | null;
  /** Optional embeddings model for ranking sentences by meaning (QUARRY_EMBEDDINGS_URL). */
  embeddings?: EmbeddingsConfig | null;
  /** Longest the embeddings model may take (default 5 s). */
  embeddingsTimeoutMs?: number;
  /** Longest the model may take to write the report (default 20 s). */
  llmTimeoutMs?: number;
  /** Overrides the tier's deadline (tests). */
  deadlineMs?: number;
}

export type OnProgress = (p: Progress) => void | Promise<void>;

const STATUS_RANK: Record<string, number> = { ok: 0, error: 1, timeout: 2, skipped: 3, disabled: 4 };

/** One status per backend over all the runs: ok when any run answered, results summed. */
export function combineStatuses(runs: readonly RunOutcome<RawResult>[]): Record<string, BackendRunStatus> {
  const out: Record<string, BackendRunStatus> = {};
  for (const run of runs) {
    for (const [id, s] of Object.entries(run.backends)) {
      const prev = out[id];
      if (!prev) {
        out[id] = { ...s };
        continue;
      }
      const better = (STATUS_RANK[s.status] ?? 9) < (STATUS_RANK[prev.status] ?? 9);
      const kept = better ? s : prev;
      // A backend that failed every run is asked again at the latest of its suspensions' ends.
      const retryAt = [s.retry_at, prev.retry_at].filter((r): r is string => r !== undefined).sort().pop();
      out[id] = {
        status: kept.status,
        results: prev.results + s.results,
        latency_ms: Math.max(prev.latency_ms, s.latency_ms),
        ...(kept.error !== undefined && kept.status !== "ok" ? { error: kept.error } : {}),
        ...(retryAt !== undefined && kept.status !== "ok" ? { retry_at: retryAt } : {}),
      };
    }
  }
  return out;
}

/** The unit of diversity: host and port (a site), without `www.`; each document of a collection cited by its `quarry:` URL is its own. */
function siteOf(url: string): string {
  return isCollectionDocUrl(url) ? url : new URL(url).host.toLowerCase().replace(/^www\./, "");
}


async function plan(deps: ResearchDeps, req: ResearchRequest, deadline: number): Promise<{ subQueries: string[]; tokens: number }> {
  const fallback = planSubQueries(req.query, req.tier);
  if (!deps.llm) return { subQueries: fallback, tokens: 0 };
  const { system, user } = planPrompt(req.query, req.tier);
  const timeout = Math.min(5_000, Math.max(0, (deadline - deps.ports.clock.now()) / 4));
  try {
    const answer = await chat(deps.fetch, deps.llm, [{ role: "system", content: system }, { role: "user", content: user }], timeout, 200);
    const planned = parseModelQueries(answer.content, req.query, req.tier);
    return { subQueries: planned.length ? planned : fallback, tokens: answer.tokens };
  } catch {
    return { subQueries: fallback, tokens: 0 };
  }
}

/** Most sentences sent to the embeddings model per question (the pages' first ones, in engine order). */
const MAX_EMBEDDED = 600;

/** The sentences' similarity to the question by the embeddings model, or null (none configured, or it failed). */
async function similarity(deps: ResearchDeps, question: string, texts: readonly SourceText[], deadline: number): Promise<{ map: Semantic | null; error?: string }> {
  if (!deps.embeddings || texts.length === 0) return { map: null };
  const sentences = texts.flatMap((t) => docSentences(t.text)).slice(0, MAX_EMBEDDED);
  const timeout = Math.min(deps.embeddingsTimeoutMs ?? 5_000, Math.max(0, (deadline - deps.ports.clock.now()) / 4));
  try {
    return { map: await questionSimilarity(deps.fetch, deps.embeddings, question, sentences, timeout) };
  } catch (err) {
    return { map: null, error: err instanceof EmbeddingsError ? err.message : "embeddings answer could not be used" };
  }
}

async function write(
  deps: ResearchDeps, req: ResearchRequest, evidence: Passage[], texts: SourceText[], titles: Map<string, string>, tier: TierPlan, model: QuestionModel,
): Promise<{ report: Report; synthesis: "extractive" | "llm"; tokens: number; llmError?: string }> {
  const extractive = () => extractiveReport(evidence, req.query, { findings: tier.findings, summarySentences: tier.summarySentences, model });
  if (!deps.llm || evidence.length === 0) return { report: extractive(), synthesis: "extractive", tokens: 0 };
  let tokens = 0;
  try {
    const answer = await chat(deps.fetch, deps.llm, synthesisMessages(req.query, evidence, titles, tier.findings), deps.llmTimeoutMs ?? 20_000);
    tokens = answer.tokens;
    const { report } = verifyReport(parseModelReport(answer.content), supportIndex(texts), tier.findings);
    if (!report.summary && report.findings.length === 0) throw new LlmError("no sentence of the model's report was supported by its cited sources");
    if (!report.summary) report.summary = report.findings.slice(0, tier.summarySentences).map((f) => citeSentence(f.text, f.citations)).join(" ");
    return { report, synthesis: "llm", tokens };
  } catch (err) {
    const message = err instanceof LlmError ? err.message : "model answer could not be used";
    return { report: extractive(), synthesis: "extractive", tokens, llmError: message };
  }
}

/**
 * `account` is the caller's: its `collections` are searched beside the engines (or alone with
 * `web: false`), and their passages stand for the pages they hold, read from the index.
 */
export async function research(deps: ResearchDeps, req: ResearchRequest, onProgress: OnProgress = () => {}, account = ""): Promise<ResearchResponse> {
  await loadLibraries();
  const { ports, runner } = deps;
  const t0 = performance.now();
  const names = req.collections ?? [];
  // A collection the account does not have is a 404 before any work, as on the collection routes.
  const store = names.length ? await checkCollections(ports.collections, account, names) : null;
  const tier = TIER_PLAN[req.tier];
  const started = ports.clock.now();
  const total = deps.deadlineMs ?? tier.deadlineMs;
  const deadline = started + total;

  await onProgress({ stage: "planning", message: deps.llm ? "planning sub-queries with the model" : "planning sub-queries" });
  const planned = await plan(deps, req, deadline);
  const queries = [req.query, ...planned.subQueries];

  await onProgress({ stage: "searching", message: `searching ${queries.length} queries`, n: queries.length });
  const engineDeadline = Math.min(deadline, ports.clock.now() + Math.min(6_000, Math.round(total * 0.4)));
  const maxResults = Math.min(20, Math.max(10, req.max_sources * 2));
  // The collections are searched while the engines are asked.
  const [own, webRuns]: [CollectionRuns, RunOutcome<RawResult>[]] = await Promise.all([
    store ? searchCollections(store, account, names, queries, maxResults) : { runs: [], texts: new Map() },
    req.web === false ? [] : Promise.all(
      queries.map((query) =>
        runner.run<RawResult>({
          query: { query, maxResults, language: "en", freshness: req.freshness ?? null },
          kind: "web",
          deadline: engineDeadline,
        }),
      ),
    ),
  ]);
  // Each query's run holds the engines' and the collections' lists side by side.
  const runs = queries.map((_, qi) => ({
    results: { ...webRuns[qi]?.results, ...own.runs[qi]?.results },
    backends: { ...webRuns[qi]?.backends, ...own.runs[qi]?.backends },
  }));
  const statuses = combineStatuses(runs);
  const tried = Object.entries(statuses).filter(([, s]) => s.status !== "disabled" && s.status !== "skipped");
  if (!tried.some(([, s]) => s.status === "ok")) {
    if (tried.length > 0 && tried.every(([, s]) => s.status === "timeout")) {
      throw new ApiError("timeout", `No search backend answered before the deadline: ${describeStatuses(statuses)}.`, failedRunExtra(statuses, ports.clock.now()));
    }
    throw new ApiError("upstream_error", tried.length ? `Every search backend failed: ${describeStatuses(statuses)}.` : `No search backend could be asked: ${describeStatuses(statuses)}.`, failedRunExtra(statuses, ports.clock.now()));
  }
  // Each (backend, query) list counts as its own voter, so a page several queries find ranks higher.
  const lists: Record<string, RawResult[]> = {};
  runs.forEach((run, qi) => {
    for (const [id, results] of Object.entries(run.results)) if (results.length) lists[`${id}#${qi}`] = results;
  });
  const merged = mergeResults(lists, req.query, {
    maxResults: req.max_sources,
    includeDomains: req.include_domains,
    excludeDomains: req.exclude_domains,
    freshness: req.freshness ?? null,
    now: ports.clock.now(),
  });
  if (merged.length === 0 && req.web === false) return nothingFound(req, planned.subQueries, statuses, t0);
  if (merged.length === 0) {
    throw new ApiError("upstream_error", `The search backends returned no usable results for this question: ${describeStatuses(statuses)}.`, { fields: { backends: statuses } });
  }

  // A page a collection holds is read from the index (its passages that matched), never fetched.
  const held = (url: string): PageOutcome | null => {
    const doc = own.texts.get(stripTracking(url));
    return doc ? { status: "read", text: doc.passages.join("\n\n"), title: doc.title, published_at: null } : null;
  };
  let pages: PageOutcome[] = merged.map((r) => held(r.url) ?? ({ status: "skipped", reason: "tier basic reads no pages" } as const));
  const toFetch = merged.map((r, i) => ({ url: r.url, i })).filter(({ i }) => pages[i]!.status !== "read");
  if (tier.readPages && toFetch.length) {
    await onProgress({ stage: "reading", message: `reading ${toFetch.length} pages`, i: 0, n: toFetch.length });
    const reserve = deps.llm ? Math.min(deps.llmTimeoutMs ?? 20_000, Math.round(total * 0.4)) : 500;
    const readDeadline = Math.max(ports.clock.now() + 1_000, deadline - reserve);
    const fetched = await readPages(ports, toFetch.map((p) => p.url), readDeadline, (done, n) => {
      void onProgress({ stage: "reading", message: `reading ${done} of ${n} pages`, i: done, n });
    });
    pages = pages.slice();
    toFetch.forEach(({ i }, k) => (pages[i] = fetched[k]!));
  }

  await onProgress({ stage: "ranking", message: `ranking the ${merged.length} sources by what they say` });
  // Once read, sources rank by what they say about the question, not by the engines' order.
  const textOf = (i: number, id: string): SourceText | null => {
    const r = merged[i]!;
    const page = pages[i]!;
    const host = siteOf(r.url);
    if (page.status === "read") return { id, host, text: page.text, fromPage: true, title: page.title ?? r.title };
    return r.content.trim() ? { id, host, text: r.content, fromPage: false, title: r.title } : null;
  };
  const firstPass = merged.map((_, i) => textOf(i, `R${i}`)).filter((t): t is SourceText => t !== null);
  const semantic = await similarity(deps, req.query, firstPass, deadline);
  const relevanceOf = modelOf(firstPass, req.query, semantic.map).documents;
  const order = merged
    .map((_, i) => ({ i, relevance: relevanceOf.get(`R${i}`) ?? 0 }))
    .sort((a, b) => b.relevance - a.relevance || a.i - b.i);
  const ranked = order.map(({ i }) => merged[i]!);
  const rankedPages = order.map(({ i }) => pages[i]!);
  const ids = ranked.map((_, i) => `S${i + 1}`);
  const texts = order.map(({ i }, k) => textOf(i, ids[k]!)).filter((t): t is SourceText => t !== null);
  const model = modelOf(texts, req.query, semantic.map);
  const evidence = rankPassages(texts, req.query, planned.subQueries, { limit: tier.passages, perHost: tier.perHost, model });

  await onProgress({ stage: "writing", message: deps.llm ? "writing the report with the model" : "writing the report" });
  const titles = new Map(ranked.map((r, i) => [ids[i]!, r.title]));
  const written = await write(deps, req, evidence, texts, titles, tier, model);
  const report = written.report;
  const read = pages.filter((p) => p.status === "read").length;
  let notice: string | undefined;
  if (report.findings.length === 0 && !report.summary) {
    report.summary = `No readable text answering this question was found; the ${merged.length} search results are listed as sources ${ids.map((id) => `[${id}]`).join("")}.`;
    notice = "nothing readable";
  } else if (tier.readPages && read === 0) {
    notice = "No page could be read; the report rests on the search engines' snippets.";
  }

  const sources = ranked.map((r, i) => {
    const page = rankedPages[i]!;
    let excerpt: string | null;
    if (page.status === "read") excerpt = req.tier === "full" ? truncateToTokens(page.text, tier.excerptTokens) : queryExcerpt(page.text, req.query, tier.excerptTokens) || null;
    else excerpt = r.content ? truncateToTokens(r.content, tier.excerptTokens) : null;
    const title = r.title || (page.status === "read" ? page.title ?? "" : "");
    const published = r.published_at ?? (page.status === "read" ? page.published_at : null);
    // The score is what the page says about the question once read (the engines' score before that).
    const score = texts.length ? model.documents.get(ids[i]!) ?? 0 : r.score;
    return { id: ids[i]!, title, url: r.url, score, excerpt, published_at: published };
  });
  const tokens =
    written.tokens + planned.tokens + countTokens(report.summary) +
    report.findings.reduce((sum, f) => sum + countTokens(f.text), 0) +
    sources.reduce((sum, s) => sum + (s.excerpt ? countTokens(s.excerpt) : 0), 0);

  return {
    meta: {
      query: req.query,
      results_count: sources.length,
      tokens_used: tokens,
      duration_ms: Math.round(performance.now() - t0),
      sub_queries: planned.subQueries,
      sources_count: sources.length,
      synthesis: written.synthesis,
      ranking: semantic.map ? "embeddings" : "lexical",
      ...(semantic.error ? { embeddings_error: semantic.error } : {}),
      ...(written.llmError ? { llm_error: written.llmError } : {}),
      ...(notice ? { notice } : {}),
      backends: statuses,
      pages: {
        read,
        failed: pages.filter((p) => p.status === "failed").length,
        skipped: tier.readPages ? pages.filter((p) => p.status === "skipped").length : 0,
        // Each source whose page was not read, and why: its excerpt is then the engine's snippet.
        unread: tier.readPages ? rankedPages.flatMap((p, i) => (p.status === "read" ? [] : [{ id: ids[i]!, url: ranked[i]!.url, reason: p.reason }])) : [],
      },
    },
    report,
    sources,
  };
}

