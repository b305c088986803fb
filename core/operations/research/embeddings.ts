/**
 * Research's use of the embeddings model (core/embeddings/client.ts): the question's similarity to
 * each sentence, rescaled within the question.
 */
import type { FetchPort } from "../../ports.ts";
import { cosine, embedTexts, type EmbeddingsConfig } from "../../embeddings/client.ts";

export { EmbeddingsError, embedTexts, type EmbeddingsConfig } from "../../embeddings/client.ts";

/**
 * Each sentence's similarity to the question, rescaled to [0, 1] over these sentences: models
 * differ in how similar unrelated texts look (some never go below 0.7), so only the order and
 * spread within one question mean anything.
 */
export async function questionSimilarity(fetch: FetchPort, config: EmbeddingsConfig, question: string, sentences: readonly string[], timeoutMs: number): Promise<Map<string, number>> {
  const unique = [...new Set(sentences)];
  if (unique.length === 0) return new Map();
  const [q, ...vectors] = await embedTexts(fetch, config, [question, ...unique], timeoutMs);
  const sims = vectors.map((v) => cosine(q!, v));
  const min = Math.min(...sims);
  const span = Math.max(...sims) - min || 1;
  return new Map(unique.map((s, i) => [s, Math.round(((sims[i]! - min) / span) * 10_000) / 10_000]));
}
