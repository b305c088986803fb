/**
 * The account's collections as research sources (api.md §11): each query of the research searched in
 * each collection, the matching documents given as results of one more engine (`collection:<name>`),
 * each under its URL or, text the account sent without one, its `quarry://collections/…` citation;
 * and what the collection holds of each as its read text. Nothing is fetched: a collection's passages
 * are the page as it was indexed.
 */
import type { BackendRunStatus, RunOutcome } from "../../backends/runner.ts";
import type { RawResult } from "../../backends/types.ts";
import { citationOf, missing, searchCollection, unavailable } from "../../collections/service.ts";
import type { CollectionStore } from "../../ports/collections.ts";
import { stripTracking } from "../../ranking/normalize-url.ts";
import { countTokens } from "../../budget/mod.ts";
import type { ResearchRequest, ResearchResponse } from "./schema.ts";

export interface CollectionSource {
  title: string | null;
  /** The document's passages that matched any of the queries, each once, best first. */
  passages: string[];
}

export interface CollectionRuns {
  /** One run per query, in the queries' order, like the web runner's. */
  runs: RunOutcome<RawResult>[];
  /** By URL (as merging leaves it): what the collections hold of that page. */
  texts: Map<string, CollectionSource>;
}

/** Refuses a name the account has no collection of, as every collection route does: a 404. */
export async function checkCollections(store: CollectionStore | undefined, account: string, names: readonly string[]): Promise<CollectionStore> {
  if (!store) throw unavailable();
  for (const name of names) if (!(await store.get(account, name))) throw missing(name);
  return store;
}

/**
 * BM25 alone (no embeddings hybrid): research ranks the sentences with the embeddings model itself.
 * `queries[0]` is the question: the documents it finds are the ones a sub-query may add passages of.
 * The planned sub-queries add facet words meant for web engines ("explained", "overview"), which in a
 * collection would match any page that uses them.
 */
export async function searchCollections(store: CollectionStore, account: string, names: readonly string[], queries: readonly string[], maxResults: number): Promise<CollectionRuns> {
  const texts = new Map<string, CollectionSource>();
  const answering = new Map<string, Set<string>>();
  await Promise.all(names.map(async (name) => {
    const docs = await searchCollection(store, account, name, queries[0] ?? "", { maxResults: 50, passagesPerDocument: 1 });
    answering.set(name, new Set(docs.map((d) => d.id)));
  }));
  const runs = await Promise.all(queries.map(async (query) => {
    const run: RunOutcome<RawResult> = { results: {}, backends: {} };
    await Promise.all(names.map(async (name) => {
      const id = `collection:${name}`;
      const t0 = Date.now();
      try {
        const docs = (await searchCollection(store, account, name, query, { maxResults: maxResults * 2 }))
          .filter((d) => answering.get(name)?.has(d.id))
          .slice(0, maxResults);
        run.results[id] = docs.map((d, i) => ({ title: d.title ?? citationOf(name, d), url: citationOf(name, d), content: d.passages.map((p) => p.text).join(" … ").slice(0, 1000), published_at: null, rank: i + 1 }));
        run.backends[id] = { status: "ok", results: docs.length, latency_ms: Date.now() - t0 } satisfies BackendRunStatus;
        for (const d of docs) {
          const key = stripTracking(citationOf(name, d));
          const held = texts.get(key) ?? { title: d.title, passages: [] };
          for (const p of d.passages) if (!held.passages.includes(p.text)) held.passages.push(p.text);
          texts.set(key, held);
        }
      } catch (err) {
        run.backends[id] = { status: "error", results: 0, latency_ms: Date.now() - t0, error: err instanceof Error ? err.message : String(err) };
      }
    }));
    return run;
  }));
  return { runs, texts };
}

/** `web: false` and no passage of the collections matched: an empty report, not an engine's failure. */
export function nothingFound(req: ResearchRequest, subQueries: string[], statuses: Record<string, BackendRunStatus>, t0: number): ResearchResponse {
  const summary = `The collections ${(req.collections ?? []).join(", ")} hold no passage matching this question.`;
  return {
    meta: {
      query: req.query, results_count: 0, tokens_used: countTokens(summary), duration_ms: Math.round(performance.now() - t0), sub_queries: subQueries,
      sources_count: 0, synthesis: "extractive", ranking: "lexical", notice: "nothing found in the collections", backends: statuses,
      pages: { read: 0, failed: 0, skipped: 0, unread: [] },
    },
    report: { summary, findings: [] },
    sources: [],
  };
}
