/**
 * bench/retrieval: ranking quality and speed of collections (api.md §11) on the Cranfield collection
 * (BEIR layout, bench/README.md), indexed and searched through the same code that serves
 * `POST /v1/collections/{name}/documents` and `/search`: core/collections on SqlCollectionStore, on
 * SQLite (FTS5) and on PostgreSQL (full-text search). lunr and minisearch run with their defaults in
 * the same process, on the same documents and queries, as the reference points.
 *
 * Metrics, as the set's README defines them: nDCG@10 (gain 2^grade − 1), Recall@100 and MAP@100,
 * averaged over the queries that have judgements.
 *
 *   npx tsx bench/retrieval/run.ts            # SQLite, PostgreSQL (QUARRY_BENCH_PG_URL or the local test server), lunr, minisearch
 *   npx tsx bench/retrieval/run.ts --no-pg
 *   npx tsx bench/retrieval/run.ts --no-pg --embeddings   # adds the embeddings hybrid (core/collections/hybrid.ts)
 *
 * `--embeddings` re-ranks the SQLite store's candidates with a real sentence-embedding model
 * (Universal Sentence Encoder lite, bench/research/embeddings-server.ts, over HTTP as Quarry calls any
 * model) at the shares 0.3, 0.5 (Quarry's) and 0.7 of the model. The model's vectors are kept in
 * bench/research/.cache, so only the first run computes them (some 20 ms a passage here).
 */
import Database from "better-sqlite3";
import lunr from "lunr";
import MiniSearch from "minisearch";
import pg from "pg";
import { COLLECTIONS_PG_SCHEMA, SqlCollectionStore } from "../../adapters/collections/sql-store.ts";
import { pgDriver, sqliteDriver, type SqlDriver } from "../../adapters/jobs/sql-drivers.ts";
import type { SyncSqlite } from "../../adapters/storage/sqlite-counters.ts";
import { addDocuments, searchCollection } from "../../core/collections/service.ts";
import { embeddingsReranker, type Reranker } from "../../core/collections/hybrid.ts";
import type { CachePort } from "../../core/ports.ts";
import { MODEL_NAME, startEmbeddingsServer } from "../research/embeddings-server.ts";
import { corpus, judged, metrics } from "./cranfield.ts";


const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** The hybrid's rerankers by the model's share, when --embeddings is given. */
const hybrids: Array<{ weight: number; rerank: Reranker }> = [];
const embeddingsServer = process.argv.includes("--embeddings") ? await startEmbeddingsServer({}) : null;
if (embeddingsServer) {
  // Quarry's own vector cache (the response cache in a server), here a map for the run.
  const kept = new Map<string, unknown>();
  const cache: CachePort = { get: async <T>(k: string) => (kept.get(k) as T) ?? null, set: async (k, v) => void kept.set(k, v), stats: async () => ({ entries: kept.size, bytes: 0 }) };
  for (const weight of [0.3, 0.5, 0.7]) {
    hybrids.push({ weight, rerank: embeddingsReranker({ fetch, config: { url: embeddingsServer.url, model: MODEL_NAME, key: null }, cache, timeoutMs: 600_000, weight }) });
  }
}

async function quarry(label: string, db: SqlDriver, withHybrids = false) {
  const store = new SqlCollectionStore(db);
  await store.init();
  await store.remove("bench", "cranfield");
  await store.create("bench", "cranfield", null, Date.now());
  const t0 = performance.now();
  for (let i = 0; i < corpus.length; i += 100) {
    // Cranfield's text repeats its title first; the title is given apart, as a page's is.
    const docs = corpus.slice(i, i + 100).map((d) => ({ id: d._id, title: d.title, markdown: d.text.startsWith(d.title) ? d.text.slice(d.title.length).trim() || d.text : d.text }));
    await addDocuments(store, "bench", "cranfield", docs, null, Date.now());
  }
  const indexMs = performance.now() - t0;
  const ranked = new Map<string, string[]>();
  const times: number[] = [];
  for (const q of judged) {
    const s = performance.now();
    const results = await searchCollection(store, "bench", "cranfield", q.text, { maxResults: 100, passagesPerDocument: 1 });
    times.push(performance.now() - s);
    ranked.set(q._id, results.map((r) => r.id));
  }
  const lexical = { label, ...metrics(ranked), docsPerSecond: corpus.length / (indexMs / 1000), p50: pct(times, 50), p95: pct(times, 95) };
  if (!withHybrids) return [lexical];
  const out = [lexical];
  for (const { weight, rerank } of hybrids) {
    const hybrid = new Map<string, string[]>();
    const took: number[] = [];
    for (const q of judged) {
      const s = performance.now();
      const results = await searchCollection(store, "bench", "cranfield", q.text, { maxResults: 100, passagesPerDocument: 1, rerank });
      took.push(performance.now() - s);
      hybrid.set(q._id, results.map((r) => r.id));
    }
    out.push({ label: `${label} + embeddings hybrid (model share ${weight}${weight === 0.5 ? ", Quarry's" : ""})`, ...metrics(hybrid), docsPerSecond: NaN, p50: pct(took, 50), p95: pct(took, 95) });
  }
  return out;
}

function lunrRun() {
  const t0 = performance.now();
  const idx = lunr(function () {
    this.ref("id");
    this.field("title");
    this.field("text");
    for (const d of corpus) this.add({ id: d._id, title: d.title, text: d.text });
  });
  const indexMs = performance.now() - t0;
  const ranked = new Map<string, string[]>();
  const times: number[] = [];
  for (const q of judged) {
    const s = performance.now();
    // lunr's query syntax: the words alone, its own punctuation left out.
    const words = q.text.replace(/[^\p{L}\p{N}\s]/gu, " ").trim();
    ranked.set(q._id, idx.search(words).slice(0, 100).map((r) => r.ref));
    times.push(performance.now() - s);
  }
  return { label: "lunr 2.3 (defaults)", ...metrics(ranked), docsPerSecond: corpus.length / (indexMs / 1000), p50: pct(times, 50), p95: pct(times, 95) };
}

function miniRun() {
  const t0 = performance.now();
  const ms = new MiniSearch({ fields: ["title", "text"], idField: "id" });
  ms.addAll(corpus.map((d) => ({ id: d._id, title: d.title, text: d.text })));
  const indexMs = performance.now() - t0;
  const ranked = new Map<string, string[]>();
  const times: number[] = [];
  for (const q of judged) {
    const s = performance.now();
    ranked.set(q._id, ms.search(q.text).slice(0, 100).map((r) => String(r.id)));
    times.push(performance.now() - s);
  }
  return { label: "minisearch 7.2 (defaults)", ...metrics(ranked), docsPerSecond: corpus.length / (indexMs / 1000), p50: pct(times, 50), p95: pct(times, 95) };
}

const rows = [];
const sqlite = new Database(":memory:");
rows.push(...(await quarry("Quarry collections, SQLite FTS5", sqliteDriver(sqlite as unknown as SyncSqlite), true)));
sqlite.close();
if (!process.argv.includes("--no-pg")) {
  const url = process.env.QUARRY_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const name = `quarry_bench_retrieval_${process.pid}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const pool = new pg.Pool({ connectionString: url.replace(/\/[^/]*$/, `/${name}`), max: 4 });
  try {
    await pool.query(COLLECTIONS_PG_SCHEMA);
    rows.push(...(await quarry("Quarry collections, PostgreSQL", pgDriver(pool))));
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE ${name}`);
    await admin.end();
  }
}
rows.push(lunrRun(), miniRun());

console.log(`Cranfield: ${corpus.length} documents, ${judged.length} judged queries\n`);
console.log("| system | nDCG@10 | Recall@100 | MAP@100 | indexing docs/s | query p50 ms | query p95 ms |");
console.log("|---|---:|---:|---:|---:|---:|---:|");
for (const r of rows) console.log(`| ${r.label} | ${r.ndcg.toFixed(3)} | ${r.recall.toFixed(3)} | ${r.map.toFixed(3)} | ${Number.isNaN(r.docsPerSecond) ? "–" : Math.round(r.docsPerSecond)} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} |`);
if (embeddingsServer) {
  console.log(`\nembeddings model: ${JSON.stringify(embeddingsServer.stats)} (texts answered from its cache / computed, requests)`);
  await embeddingsServer.close();
}
