/**
 * What the collection routes, scrape and crawl do with a collection (api.md §11): documents made into
 * passages and added within the plan's `index_documents` and `index_bytes`, and searches answered by document, each
 * with its best passages.
 */
import { sha256Hex } from "../keys/secret.ts";
import { countTokens } from "../budget/mod.ts";
import { ApiError } from "../errors.ts";
import { matchesDomain } from "../ranking/merge.ts";
import { collectionDocUrl } from "../ranking/normalize-url.ts";
import type { BackendRunStatus } from "../backends/runner.ts";
import type { RawResult } from "../backends/types.ts";
import type { CollectionStore, IndexCap, IndexCaps, IndexedDocument, PassageHit, PutOutcome, PutResult } from "../ports/collections.ts";
import { sizeText } from "../limits/plans.ts";
import type { Reranker } from "./hybrid.ts";
import { splitPassages } from "./passages.ts";
import { queryTerms } from "./query.ts";

export const COLLECTION_NAME = /^[a-z0-9_-]{1,64}$/;

export interface DocumentInput {
  id?: string;
  url?: string | null;
  title?: string | null;
  /** Markdown or plain text (plain text is markdown without marks). */
  markdown: string;
  metadata?: Record<string, unknown> | null;
}

/** A document's id: the one given, else its URL, else its content's hash. */
export async function toIndexed(d: DocumentInput): Promise<IndexedDocument> {
  const hash = sha256Hex(JSON.stringify([d.title ?? null, d.markdown, d.metadata ?? null]));
  return {
    id: d.id ?? d.url ?? hash.slice(0, 32),
    url: d.url ?? null,
    title: d.title ?? null,
    hash,
    passages: splitPassages(d.markdown),
    metadata: d.metadata ?? null,
  };
}

export function unavailable(): ApiError {
  return new ApiError("service_unavailable", "Collections need a database: this server runs on memory storage. Start it on SQLite (the default) or PostgreSQL.");
}

export function missing(name: string): ApiError {
  return new ApiError("not_found", `This account has no collection named "${name}".`);
}

/** An account's caps from its plan, as the store takes them. */
export function planCaps(plan: { indexDocuments: number | null; indexBytes: number | null }): IndexCaps {
  return { maxDocuments: plan.indexDocuments, maxBytes: plan.indexBytes };
}

/** The 403 for a put the plan's caps refused: the message names the limit, and so does `limit` in the error object. */
export function indexFull(r: Extract<PutResult, { reason: "index_full" }>, documents: number): ApiError {
  const what = documents === 1 ? "this document" : `these ${documents} documents`;
  const message = r.cap === "index_bytes"
    ? `This account's collections hold ${sizeText(r.held)} of text (${r.held} bytes) and its plan allows ${sizeText(r.limit)} (index_bytes: ${r.limit}): ${what} would add ${r.adding} bytes and pass it, so none was added.`
    : `This account's collections hold ${r.held} documents and its plan allows ${r.limit} (index_documents): adding ${r.adding} more would pass it, so none was added.`;
  return new ApiError("index_full", `${message} Remove documents or collections, or move to a larger plan.`, { fields: { limit: r.cap, held: r.held, adding: r.adding, allowed: r.limit } });
}

/** Adds documents to an account's collection, all or none, within the plan's caps (null: none). */
export async function addDocuments(store: CollectionStore, account: string, name: string, docs: DocumentInput[], caps: IndexCaps | null, now: number): Promise<PutOutcome> {
  const indexed = await Promise.all(docs.map(toIndexed));
  const ids = new Set<string>();
  for (const d of indexed) {
    if (ids.has(d.id)) throw new ApiError("invalid_request", `Two documents of this request have the id "${d.id}".`, { details: [{ field: "documents", message: `duplicate id ${d.id}` }] });
    ids.add(d.id);
  }
  const r = await store.put(account, name, indexed, { maxDocuments: null, maxBytes: null, ...caps, now });
  if (r.ok) return r.outcome;
  if (r.reason === "no_collection") throw missing(name);
  throw indexFull(r, indexed.length);
}

export interface SearchHitDocument {
  id: string;
  url: string | null;
  title: string | null;
  score: number;
  passages: Array<{ text: string; heading: string | null; score: number }>;
}

/**
 * Passages grouped by document, documents ranked by their best passage. Scores are the store's,
 * scaled so the best passage of the answer is 1.
 */
export interface SearchOptions {
  maxResults: number;
  includeDomains?: readonly string[] | undefined;
  excludeDomains?: readonly string[] | undefined;
  /** The passages' tokens in all; the lowest-ranked passages are left out past it (a document keeps its best one). */
  maxTokens?: number | undefined;
  passagesPerDocument?: number;
  /** Re-orders the store's best passages (the embeddings hybrid, hybrid.ts); absent = BM25 alone. */
  rerank?: Reranker | undefined;
}

export interface RankedSearch {
  results: SearchHitDocument[];
  ranking: "lexical" | "hybrid";
  /** Why an embeddings model configured for the hybrid could not be used for this search. */
  embeddingsError?: string;
}

export async function searchCollection(store: CollectionStore, account: string, name: string, query: string, opts: SearchOptions): Promise<SearchHitDocument[]> {
  return (await searchCollectionRanked(store, account, name, query, opts)).results;
}

/** The search, and which ranking answered it. */
export async function searchCollectionRanked(store: CollectionStore, account: string, name: string, query: string, opts: SearchOptions): Promise<RankedSearch> {
  const terms = queryTerms(query);
  if (!terms.length) return { results: [], ranking: "lexical" };
  const filtered = Boolean(opts.includeDomains?.length || opts.excludeDomains?.length);
  let hits = await store.search(account, name, terms, opts.maxResults * (filtered ? 32 : 8));
  if (filtered) {
    const hostOf = (url: string | null) => {
      try {
        return url ? new URL(url).hostname : null;
      } catch {
        return null;
      }
    };
    hits = hits.filter((h) => {
      const host = hostOf(h.url);
      if (opts.includeDomains?.length && !(host && matchesDomain(host, opts.includeDomains))) return false;
      return !(opts.excludeDomains?.length && host && matchesDomain(host, opts.excludeDomains));
    });
  }
  let ranking: RankedSearch["ranking"] = "lexical";
  let embeddingsError: string | undefined;
  if (opts.rerank && hits.length) {
    const r = await opts.rerank(query, hits);
    ({ hits, ranking } = r);
    embeddingsError = r.error;
  }
  const docs = groupHits(hits, opts.maxResults, opts.passagesPerDocument ?? 3);
  const results = opts.maxTokens ? withinTokens(docs, opts.maxTokens) : docs;
  return { results, ranking, ...(embeddingsError ? { embeddingsError } : {}) };
}

/** Keeps every document's best passage, then the others by score while the tokens last. */
function withinTokens(docs: SearchHitDocument[], max: number): SearchHitDocument[] {
  let left = max;
  const out = docs.map((d) => ({ ...d, passages: d.passages.slice(0, 1) }));
  for (const d of out) left -= countTokens(d.passages[0]?.text ?? "");
  const rest = docs.flatMap((d, i) => d.passages.slice(1).map((p) => ({ i, p }))).sort((a, b) => b.p.score - a.p.score);
  for (const { i, p } of rest) {
    const n = countTokens(p.text);
    if (n > left) continue;
    left -= n;
    out[i]!.passages.push(p);
  }
  return out;
}

export function groupHits(hits: PassageHit[], maxResults: number, passagesPerDocument: number): SearchHitDocument[] {
  const top = hits.reduce((m, h) => Math.max(m, h.score), 0) || 1;
  const byDoc = new Map<string, SearchHitDocument>();
  for (const h of hits) {
    const score = Math.round((h.score / top) * 1000) / 1000;
    let doc = byDoc.get(h.docId);
    if (!doc) byDoc.set(h.docId, (doc = { id: h.docId, url: h.url, title: h.title, score, passages: [] }));
    if (doc.passages.length < passagesPerDocument) doc.passages.push({ text: h.text, heading: h.heading, score });
  }
  return [...byDoc.values()].sort((a, b) => b.score - a.score).slice(0, maxResults);
}

/** Why a page read by a job was not indexed: its collection is gone, or a plan cap (`limit`) refused it. */
export type PageRefusal = { code: "no_collection" } | { code: "index_full"; limit: IndexCap };

/**
 * Indexes one page read by scrape or a job: null when done (or unchanged), else why it was not,
 * which the caller reports for that page.
 */
export async function indexPage(store: CollectionStore | undefined, account: string, name: string, page: { url: string; title: string | null; markdown: string }, caps: IndexCaps | null, now: number): Promise<PageRefusal | null> {
  if (!store) return { code: "no_collection" };
  if (!page.markdown.trim()) return null;
  const r = await store.put(account, name, [await toIndexed({ id: page.url, url: page.url, title: page.title, markdown: page.markdown })], { maxDocuments: null, maxBytes: null, ...caps, now });
  if (r.ok) return null;
  return r.reason === "index_full" ? { code: "index_full", limit: r.cap } : { code: "no_collection" };
}

/** Where an answer cites a collection's document: its http(s) URL, else `quarry://collections/<name>/documents/<id>`. */
export function citationOf(name: string, d: { id: string; url: string | null }): string {
  return d.url && /^https?:\/\//i.test(d.url) ? d.url : collectionDocUrl(name, d.id);
}

export interface CollectionRun {
  results: Record<string, RawResult[]>;
  backends: Record<string, BackendRunStatus>;
}

/**
 * The account's collections searched as engines for POST /v1/search (api.md §11): each is
 * `collection:<name>`, its documents are its results (their best passages as the snippet), each under
 * its http(s) URL or else its citation (citationOf), and a collection the account does not have is
 * that engine's error.
 */
export async function collectionsAsEngines(store: CollectionStore | undefined, account: string, names: readonly string[], query: string, maxResults: number, rerank?: Reranker): Promise<CollectionRun> {
  const run: CollectionRun = { results: {}, backends: {} };
  await Promise.all(names.map(async (name) => {
    const id = `collection:${name}`;
    const t0 = Date.now();
    try {
      if (!store) throw unavailable();
      if (!(await store.get(account, name))) throw missing(name);
      const docs = await searchCollection(store, account, name, query, { maxResults, rerank });
      run.results[id] = docs.map((d, i) => ({ title: d.title ?? citationOf(name, d), url: citationOf(name, d), content: d.passages.map((p) => p.text).join(" … ").slice(0, 1000), published_at: null, rank: i + 1 }));
      run.backends[id] = { status: "ok", results: docs.length, latency_ms: Date.now() - t0 };
    } catch (err) {
      run.backends[id] = { status: "error", results: 0, latency_ms: Date.now() - t0, error: err instanceof Error ? err.message : String(err) };
    }
  }));
  return run;
}
