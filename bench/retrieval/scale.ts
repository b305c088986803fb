/**
 * bench/retrieval/scale.ts: speed and size of a large collection (issue #30), through the code that serves
 * collections (core/collections on SqlCollectionStore), on SQLite (a file, WAL) and PostgreSQL.
 *
 * The collection is built from the article-extraction set's 181 news articles (their ground-truth text,
 * `QUARRY_BENCH_DATA`/article-extraction, bench/README.md), cut into passages as any document is. Copy 0 is
 * the articles as they are; each further copy k is every article again with its text varied, so that copies
 * are not duplicates and the vocabulary keeps growing as a real collection's does: each word of four letters
 * or more is, with probability 0.25, replaced by a word drawn from the whole set's running text (which keeps
 * the words' frequencies), and with probability 0.02 by itself with a suffix of copy k (a new rare word).
 * The draws come from a seeded generator, so every run builds the same collection. Copies are added until
 * the collection holds the asked number of passages.
 *
 * Queries: 300 spans of 2 to 6 consecutive words of random passages of the set (stop words included, as
 * typed), searched as `POST /v1/collections/{name}/search` does (10 documents, 3 passages each).
 *
 *   npx tsx bench/retrieval/scale.ts                          # SQLite, 100,000 passages
 *   npx tsx bench/retrieval/scale.ts --store pg --passages 1000000 --queries 100 --batch 200
 *   npx tsx bench/retrieval/scale.ts --db /tmp/scale.db         # SQLite: keep the database file there
 *   npx tsx bench/retrieval/scale.ts --store pg --pg-db scale_x  # PostgreSQL: keep the database (made if missing)
 *
 * A kept database that already holds the asked number of passages is searched without filling it again.
 *
 * `--minutes M`: fill for at most M minutes, then measure what was filled. `--batch N`: documents a call of addDocuments (20 by default, as a crawl's pages arrive; a bulk add sends
 * more). On PostgreSQL the RSS of the server's processes serving the bench's database is read from /proc
 * (the server must run on this machine), beside the whole server's.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { COLLECTIONS_PG_SCHEMA, SqlCollectionStore } from "../../adapters/collections/sql-store.ts";
import { pgDriver, sqliteDriver, type SqlDriver } from "../../adapters/jobs/sql-drivers.ts";
import type { SyncSqlite } from "../../adapters/storage/sqlite-counters.ts";
import { addDocuments, searchCollection } from "../../core/collections/service.ts";
import { benchSet } from "../data.ts";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};
const target = Number(arg("passages", "100000"));
const stores = arg("store", "sqlite").split(",");
const batch = Number(arg("batch", "20"));
/** `--minutes M`: stop filling after M minutes and measure the collection as far as it got. */
const fillMs = Number(arg("minutes", "0")) * 60_000 || Infinity;

const truth = JSON.parse(readFileSync(join(benchSet("article-extraction"), "ground-truth.json"), "utf8")) as Record<string, { articleBody: string; url: string }>;
const articles = Object.entries(truth).map(([id, a]) => ({ id, url: a.url, text: a.articleBody }));
const allWords = articles.flatMap((a) => a.text.split(/\s+/).filter((w) => /^[\p{L}]{4,}$/u.test(w)));

/** mulberry32: a small seeded generator, so each run builds the same collection. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function copyOf(k: number) {
  if (k === 0) return articles.map((a) => ({ id: a.id, url: a.url, title: a.text.split("\n")[0]!.slice(0, 120), markdown: a.text }));
  const r = rng(k);
  return articles.map((a) => {
    const text = a.text.replace(/[\p{L}]{4,}/gu, (w) => {
      const x = r();
      if (x < 0.25) return allWords[Math.floor(r() * allWords.length)]!;
      if (x < 0.27) return `${w}${k.toString(36)}`;
      return w;
    });
    return { id: `${a.id}-${k}`, url: `${a.url}#copy-${k}`, title: text.split("\n")[0]!.slice(0, 120), markdown: text };
  });
}

const qr = rng(424242);
const queries = Array.from({ length: Number(arg("queries", "300")) }, () => {
  const words = articles[Math.floor(qr() * articles.length)]!.text.split(/\s+/).filter(Boolean);
  const n = 2 + Math.floor(qr() * 5);
  const at = Math.floor(qr() * Math.max(1, words.length - n));
  return words.slice(at, at + n).join(" ");
});

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const mb = (b: number) => (b / 1048576).toFixed(0);
const rss = () => process.memoryUsage().rss;

/** The resident memory of processes: PostgreSQL's own, read from /proc (shared buffers each process touched count in each). */
const rssOfPid = (pid: number | string) => {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
};
const postgresPids = () =>
  readdirSync("/proc").filter((d) => {
    if (!/^\d+$/.test(d)) return false;
    try {
      return readFileSync(`/proc/${d}/comm`, "utf8").trim() === "postgres";
    } catch {
      return false;
    }
  });

async function run(label: string, db: SqlDriver, size: () => Promise<number>, serverMemory: () => Promise<string> = async () => "—") {
  const store = new SqlCollectionStore(db);
  await store.init();
  await store.create("bench", "scale", null, Date.now());
  const fillRss: number[] = [];
  // A kept database (`--db`, `--pg-db`) that already holds the collection is searched as it is, not filled again.
  let passages = (await store.get("bench", "scale"))!.passages, docs = 0, k = passages >= target ? Infinity : 0;
  const t0 = performance.now();
  let lastReport = t0;
  while (passages < target && performance.now() - t0 < fillMs) {
    const copy = copyOf(k++);
    for (let i = 0; i < copy.length && passages < target && performance.now() - t0 < fillMs; i += batch) {
      const part = copy.slice(i, i + batch);
      await addDocuments(store, "bench", "scale", part, null, Date.now());
      docs += part.length;
      passages = (await store.get("bench", "scale"))!.passages;
      fillRss.push(rss());
    }
    if (performance.now() - lastReport > 30_000) {
      lastReport = performance.now();
      console.error(`${label}: ${passages} passages, ${docs} documents, ${((performance.now() - t0) / 1000).toFixed(0)} s, RSS ${mb(rss())} MB`);
    }
  }
  const fillS = (performance.now() - t0) / 1000;
  const memFilled = await serverMemory();
  const info = (await store.get("bench", "scale"))!;
  const onDisk = await size();
  const times: number[] = [];
  const searchRss: number[] = [];
  for (const round of [0, 1]) {
    for (const q of queries) {
      const s = performance.now();
      await searchCollection(store, "bench", "scale", q, { maxResults: 10, passagesPerDocument: 3 });
      if (round === 1) times.push(performance.now() - s);
      searchRss.push(rss());
    }
  }
  const memSearched = await serverMemory();
  const quarter = fillRss.slice(Math.floor(fillRss.length / 4));
  return {
    label, passages: info.passages, documents: info.documents, textMB: mb(info.bytes), diskMB: mb(onDisk), ratio: (onDisk / info.bytes).toFixed(2),
    docsPerS: docs ? Math.round(docs / fillS) : "—", passagesPerS: docs ? Math.round(info.passages / fillS) : "—",
    p50: pct(times, 50).toFixed(1), p95: pct(times, 95).toFixed(1), max: Math.max(...times).toFixed(0),
    fillRss: quarter.length ? `${mb(Math.min(...quarter))}–${mb(Math.max(...quarter))}` : "—", searchRss: `${mb(Math.min(...searchRss))}–${mb(Math.max(...searchRss))}`,
    server: memFilled === "—" ? "—" : `${memFilled} / ${memSearched}`,
  };
}

const rows = [];
if (stores.includes("sqlite")) {
  const kept = process.argv.includes("--db") ? arg("db", "") : null;
  const dir = kept ? null : mkdtempSync(join(tmpdir(), "quarry-scale-"));
  const file = kept ?? join(dir!, "scale.db");
  const sqlite = new Database(file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  try {
    rows.push(await run("SQLite (file, WAL)", sqliteDriver(sqlite as unknown as SyncSqlite), async () => {
      sqlite.pragma("wal_checkpoint(TRUNCATE)");
      try {
        const parts = sqlite.prepare("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC").all() as { name: string; bytes: number }[];
        console.error(`SQLite by table: ${parts.map((p) => `${p.name} ${mb(p.bytes)} MB`).join(", ")}`);
      } catch {
        // dbstat is not compiled into every SQLite.
      }
      return statSync(file).size + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
    }));
  } finally {
    sqlite.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}
if (stores.includes("pg")) {
  const url = process.env.QUARRY_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const kept = process.argv.includes("--pg-db") ? arg("pg-db", "") : null;
  const name = kept ?? `quarry_bench_scale_${process.pid}`;
  if (!kept || !(await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [kept])).rowCount) await admin.query(`CREATE DATABASE ${name}`);
  const pool = new pg.Pool({ connectionString: url.replace(/\/[^/]*$/, `/${name}`), max: 4 });
  try {
    await pool.query(COLLECTIONS_PG_SCHEMA);
    rows.push(await run("PostgreSQL", pgDriver(pool), async () => {
      await pool.query("VACUUM ANALYZE");
      const { rows: parts } = await pool.query("SELECT c.relname, pg_total_relation_size(c.oid) AS n FROM pg_class c WHERE c.relkind IN ('r', 'i') AND c.relname LIKE 'quarry_collection%' ORDER BY n DESC");
      console.error(`PostgreSQL by relation (tables with their TOAST and indexes, then each index): ${parts.map((p) => `${p.relname} ${mb(Number(p.n))} MB`).join(", ")}`);
      const { rows: r } = await pool.query("SELECT sum(pg_total_relation_size(c.oid))::bigint AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE c.relkind = 'r' AND c.relname LIKE 'quarry_collection%'");
      return Number(r[0].n);
    }, async () => {
      // The backends serving this database (the pool's), and every postgres process on the machine (other databases' too).
      const { rows: b } = await pool.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database()");
      const own = b.reduce((n, r) => n + rssOfPid(r.pid), 0);
      const all = postgresPids().reduce((n, pid) => n + rssOfPid(pid), 0);
      return `${mb(own)} (${b.length} backends), all ${mb(all)}`;
    }));
  } finally {
    await pool.end();
    if (!kept) await admin.query(`DROP DATABASE ${name}`);
    await admin.end();
  }
}
console.log(`\n${queries.length} queries of 2–6 words, after one warm-up round; RSS is the whole process's (the bench's copies of the text included), filling from its first quarter on\n`);
console.log("| store | passages | documents | text MB | on disk MB | disk / text | indexing docs/s | passages/s | query p50 ms | p95 ms | max ms | RSS filling MB | RSS searching MB | server RSS MB filled / searched |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
for (const r of rows) console.log(`| ${r.label} | ${r.passages} | ${r.documents} | ${r.textMB} | ${r.diskMB} | ${r.ratio} | ${r.docsPerS} | ${r.passagesPerS} | ${r.p50} | ${r.p95} | ${r.max} | ${r.fillRss} | ${r.searchRss} | ${r.server} |`);
