/**
 * What checking the plan's index caps costs per put, for an account holding many documents: reading
 * every document of the account (count and sum of `bytes`, through the account index or a covering
 * index on (account, bytes)) against the sum of its collections' held_documents/held_bytes (what
 * adapters/collections/sql-store.ts does). `npx tsx bench/collections-cap/holds.ts [documents] [pg url]`;
 * the PostgreSQL database must exist (its two tables are made and dropped here).
 */
import Database from "better-sqlite3";
import pg from "pg";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";

const N = Number(process.argv[2] ?? 1_000_000);
const PG_URL = process.argv[3] ?? "postgres://postgres@127.0.0.1:5432/q_collcap";
const DOCS = "SELECT count(*) AS n, coalesce(sum(bytes), 0) AS b FROM quarry_collection_docs WHERE account = ?";
const HELD = "SELECT coalesce(sum(held_documents), 0) AS n, coalesce(sum(held_bytes), 0) AS b FROM quarry_collections WHERE account = ?";
const SCHEMA = `CREATE TABLE quarry_collection_docs (account TEXT NOT NULL, collection TEXT NOT NULL, id TEXT NOT NULL, url TEXT, title TEXT, hash TEXT NOT NULL, passages INTEGER NOT NULL, bytes BIGINT NOT NULL, metadata TEXT, updated_at BIGINT NOT NULL, PRIMARY KEY (account, collection, id));
CREATE INDEX quarry_collection_docs_account ON quarry_collection_docs (account);
CREATE TABLE quarry_collections (account TEXT NOT NULL, name TEXT NOT NULL, held_documents BIGINT NOT NULL, held_bytes BIGINT NOT NULL, PRIMARY KEY (account, name));`;
/** 90% of the documents in one account's 5 collections, the rest in another account. */
const account = (i: number) => (i % 10 === 0 ? "other" : "big");

async function timed(label: string, run: () => unknown | Promise<unknown>, reps = 5): Promise<void> {
  await run();
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) await run();
  console.log(`${label}: ${((performance.now() - t0) / reps).toFixed(2)} ms`);
}

async function main() {
  const file = join(tmpdir(), `quarry-holds-${process.pid}.db`);
  const db = new Database(file);
  db.exec(SCHEMA);
  const ins = db.prepare("INSERT INTO quarry_collection_docs VALUES (?, ?, ?, ?, ?, ?, 3, ?, NULL, 1)");
  db.transaction(() => {
    for (let i = 0; i < N; i++) ins.run(account(i), `c${i % 5}`, `https://example.org/docs/page-${i}`, `https://example.org/docs/page-${i}`, `Page ${i} of the documentation`, "a".repeat(64), 1000 + (i % 5000));
  })();
  db.exec("INSERT INTO quarry_collections SELECT account, collection, count(*), sum(bytes) FROM quarry_collection_docs GROUP BY account, collection");
  await timed(`SQLite, ${N} documents, every document (account index)`, () => db.prepare(DOCS).get("big"));
  db.exec("CREATE INDEX quarry_collection_docs_bytes ON quarry_collection_docs (account, bytes)");
  await timed(`SQLite, ${N} documents, every document (covering index)`, () => db.prepare(DOCS).get("big"));
  await timed(`SQLite, ${N} documents, held on the collections' rows`, () => db.prepare(HELD).get("big"));
  db.close();
  rmSync(file, { force: true });

  const pool = new pg.Pool({ connectionString: PG_URL });
  const q = (sql: string) => sql.replace("?", "$1");
  try {
    await pool.query(SCHEMA);
    await pool.query(`INSERT INTO quarry_collection_docs SELECT CASE WHEN i % 10 = 0 THEN 'other' ELSE 'big' END, 'c' || i % 5, 'https://example.org/docs/page-' || i, 'https://example.org/docs/page-' || i, 'Page ' || i || ' of the documentation', repeat('a', 64), 3, 1000 + i % 5000, NULL, 1 FROM generate_series(0, ${N - 1}) i`);
    await pool.query("INSERT INTO quarry_collections SELECT account, collection, count(*), sum(bytes) FROM quarry_collection_docs GROUP BY account, collection");
    await pool.query("VACUUM ANALYZE quarry_collection_docs");
    await timed(`PostgreSQL, ${N} documents, every document (account index)`, () => pool.query(q(DOCS), ["big"]));
    await pool.query("CREATE INDEX quarry_collection_docs_bytes ON quarry_collection_docs (account, bytes)");
    await pool.query("VACUUM ANALYZE quarry_collection_docs");
    await timed(`PostgreSQL, ${N} documents, every document (covering index)`, () => pool.query(q(DOCS), ["big"]));
    await timed(`PostgreSQL, ${N} documents, held on the collections' rows`, () => pool.query(q(HELD), ["big"]));
  } finally {
    await pool.query("DROP TABLE IF EXISTS quarry_collection_docs; DROP TABLE IF EXISTS quarry_collections");
    await pool.end();
  }
}

await main();
