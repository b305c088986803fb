/**
 * The hybrid of words and meaning for collection searches (api.md §11, "Ranking"): with an
 * embeddings model configured (QUARRY_EMBEDDINGS_URL), the store's best passages by BM25 are
 * re-ranked by a convex combination of the two scores, each scaled to [0, 1] over the candidates:
 *
 *   score = (1 − w) · bm25 / max(bm25) + w · (cos − min cos) / (max cos − min cos)
 *
 * A convex combination of normalised scores rather than reciprocal-rank fusion: it keeps how far
 * apart the candidates are, not only their order, and in published comparisons of fusion functions
 * for hybrid retrieval (Bruch, Gai and Ingber, ACM TOIS 2023) it matched or beat RRF with one
 * parameter that transfers across collections. Equal shares (w = 0.5) are the prior that favours
 * neither signal; bench/retrieval reports the figures for the weights beside it.
 *
 * The model only re-orders what the words found: a passage sharing no term with the query is never
 * a candidate. Passage vectors are kept in the response cache by the model and a hash of the text,
 * so a passage is sent to the model once, not on every query that finds it. Any failure of the
 * model leaves the BM25 order as it was and says why.
 */
import { sha256Hex } from "../keys/secret.ts";
import type { CachePort, FetchPort } from "../ports.ts";
import type { PassageHit } from "../ports/collections.ts";
import { cosine, embedTexts, EmbeddingsError, type EmbeddingsConfig } from "../embeddings/client.ts";

/** The share of the model's similarity in a candidate's score. */
export const SEMANTIC_WEIGHT = 0.5;
/** How long a passage's vector stays in the cache (its key names the text, so it never goes stale). */
const VECTOR_TTL_S = 30 * 86_400;

export interface RerankOutcome {
  hits: PassageHit[];
  ranking: "lexical" | "hybrid";
  error?: string;
}

export type Reranker = (query: string, hits: PassageHit[]) => Promise<RerankOutcome>;

/** What the model reads of a passage: the document's title and the heading put it in context. */
export function passageForModel(h: Pick<PassageHit, "title" | "heading" | "text">): string {
  const head = [h.title, h.heading].filter((s): s is string => Boolean(s && s.trim())).join(" — ");
  return head ? `${head}\n${h.text}` : h.text;
}

/** float32, base64: the precision models answer in, at a quarter of the JSON numbers' size. */
function packVector(v: readonly number[]): string {
  const bytes = new Uint8Array(new Float32Array(v).buffer);
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function unpackVector(s: unknown): number[] | null {
  if (typeof s !== "string" || !s) return null;
  try {
    const bin = atob(s);
    if (bin.length % 4) return null;
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return Array.from(new Float32Array(bytes.buffer));
  } catch {
    return null;
  }
}

/** Combines the two scores as the module comment says; hits come back best first. */
export function combineScores(hits: readonly PassageHit[], similarity: readonly number[], weight = SEMANTIC_WEIGHT): PassageHit[] {
  const top = hits.reduce((m, h) => Math.max(m, h.score), 0) || 1;
  const min = Math.min(...similarity);
  const span = Math.max(...similarity) - min || 1;
  return hits
    .map((h, i) => ({ ...h, score: (1 - weight) * (h.score / top) + weight * ((similarity[i]! - min) / span) }))
    .sort((a, b) => b.score - a.score);
}

export interface EmbeddingsRerankDeps {
  fetch: FetchPort;
  config: EmbeddingsConfig;
  /** Where passage vectors are kept between queries; absent = computed for each query. */
  cache?: CachePort;
  timeoutMs: number;
  weight?: number;
}

/** A reranker that asks the embeddings model for what the cache does not hold. */
export function embeddingsReranker(deps: EmbeddingsRerankDeps): Reranker {
  const model = deps.config.model ?? "default";
  return async (query, hits) => {
    if (hits.length < 2) return { hits, ranking: "lexical" };
    try {
      const texts = hits.map(passageForModel);
      const keys = texts.map((t) => `emb:${model}:${sha256Hex(t)}`);
      const cached = deps.cache ? await Promise.all(keys.map((k) => deps.cache!.get<string>(k).then(unpackVector, () => null))) : texts.map(() => null);
      const missing = [...new Set(texts.filter((_, i) => !cached[i]))];
      const answered = await embedTexts(deps.fetch, deps.config, [query, ...missing], deps.timeoutMs);
      const q = answered[0]!;
      const fresh = new Map(missing.map((t, i) => [t, answered[i + 1]!]));
      const vectors = texts.map((t, i) => cached[i] ?? fresh.get(t)!);
      if (vectors.some((v) => v.length !== q.length)) throw new EmbeddingsError("embeddings model answered vectors of another length than the cached ones (was the model changed under the same name?)");
      if (deps.cache) {
        await Promise.all(texts.map((t, i) => (cached[i] ? null : deps.cache!.set(keys[i]!, packVector(fresh.get(t)!), VECTOR_TTL_S).catch(() => {}))));
      }
      return { hits: combineScores(hits, vectors.map((v) => cosine(q, v)), deps.weight), ranking: "hybrid" };
    } catch (err) {
      return { hits, ranking: "lexical", error: err instanceof EmbeddingsError ? err.message : "embeddings answer could not be used" };
    }
  };
}

/** Longest a collection search waits for the model before answering with BM25 alone. */
export const RERANK_TIMEOUT_MS = 5_000;

/** The reranker for the app's configuration: none without QUARRY_EMBEDDINGS_URL. */
export function collectionReranker(config: EmbeddingsConfig | null | undefined, fetch: FetchPort, cache?: CachePort): Reranker | undefined {
  return config ? embeddingsReranker({ fetch, config, ...(cache ? { cache } : {}), timeoutMs: RERANK_TIMEOUT_MS }) : undefined;
}
