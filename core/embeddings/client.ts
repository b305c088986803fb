/**
 * The optional embeddings model (QUARRY_EMBEDDINGS_URL, an OpenAI-compatible `/embeddings`
 * endpoint). One function that takes the fetch to use, so the outbound path can be rewired
 * without touching it. Research ranks sentences with it and collections re-rank their best
 * passages; any failure leaves the lexical ranking alone in charge.
 */
import type { FetchPort } from "../ports.ts";

export interface EmbeddingsConfig {
  url: string;
  model: string | null;
  key: string | null;
}

export class EmbeddingsError extends Error {}

/** Texts per request: OpenAI-compatible servers commonly accept a few hundred inputs at once. */
const BATCH = 128;

/** One vector per text, in order; throws EmbeddingsError on timeout, HTTP errors and malformed answers. */
export async function embedTexts(fetch: FetchPort, config: EmbeddingsConfig, texts: readonly string[], timeoutMs: number): Promise<number[][]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (config.key) headers.authorization = `Bearer ${config.key}`;
    const batches: string[][] = [];
    for (let i = 0; i < texts.length; i += BATCH) batches.push(texts.slice(i, i + BATCH));
    const answers = await Promise.all(
      batches.map(async (input) => {
        const res = await fetch(`${config.url.replace(/\/+$/, "")}/embeddings`, {
          method: "POST",
          headers,
          body: JSON.stringify({ model: config.model ?? "default", input }),
          signal: controller.signal,
        });
        if (!res.ok) {
          await res.body?.cancel().catch(() => {});
          throw new EmbeddingsError(`embeddings model answered HTTP ${res.status}`);
        }
        const data = (await res.json().catch(() => null)) as { data?: { embedding?: unknown; index?: unknown }[] } | null;
        const rows = Array.isArray(data?.data) ? data.data : null;
        if (!rows || rows.length !== input.length) throw new EmbeddingsError(`embeddings model answered ${rows ? rows.length : "no"} vectors for ${input.length} texts`);
        // Servers may answer out of order; `index` says which input each vector belongs to.
        const ordered = rows.every((r) => typeof r.index === "number") ? [...rows].sort((a, b) => (a.index as number) - (b.index as number)) : rows;
        return ordered.map((r) => {
          const v = r.embedding;
          if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === "number" && Number.isFinite(x))) throw new EmbeddingsError("embeddings model answered a malformed vector");
          return v as number[];
        });
      }),
    );
    const vectors = answers.flat();
    if (vectors.some((v) => v.length !== vectors[0]!.length)) throw new EmbeddingsError("embeddings model answered vectors of different lengths");
    return vectors;
  } catch (err) {
    if (err instanceof EmbeddingsError) throw err;
    if (controller.signal.aborted) throw new EmbeddingsError(`embeddings model did not answer within ${timeoutMs} ms`);
    throw new EmbeddingsError(`embeddings model unreachable: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearTimeout(timer);
  }
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
