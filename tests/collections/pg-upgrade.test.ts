/**
 * PostgreSQL collections written by older versions: the one that kept a row per passage with a `tsvector` (GIN
 * index) and a table of the terms' passage counts, and data format 2, whose postings blocks were bigint[] of
 * packed entries. After the upgrade at start they are searched, ranked, changed and removed like collections
 * made by this version, and the old tables are gone.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { COLLECTIONS_PG_SCHEMA, SqlCollectionStore, weightedCounts } from "../../adapters/collections/sql-store.ts";
import { pgDriver } from "../../adapters/jobs/sql-drivers.ts";
import { analyzePassage } from "../../core/collections/analyze.ts";
import { addDocuments, searchCollection, toIndexed } from "../../core/collections/service.ts";
import type { CollectionStore } from "../../core/ports/collections.ts";
import { tempDatabase } from "../helpers/pg.ts";

const PAGES = [
  { id: "wing-flutter", title: "Flutter of swept wings", markdown: "Flutter of a swept wing at high subsonic speed was measured in a wind tunnel. The flutter speed fell as the sweep grew." },
  { id: "heat-slab", title: "Heat conduction in composite slabs", markdown: "# Slabs\n\nTransient heat conduction through a composite slab of two materials.\n\n## Interface\n\nThe interface temperature is given in closed form." },
  { id: "tunnel", title: "A new wind tunnel", markdown: "The wind tunnel of the laboratory runs at speeds up to Mach 3. Its test section, its nozzle and its balance are described." },
  { id: "boundary", title: "Boundary layer on a flat plate", markdown: "A laminar boundary layer on a flat plate with heat transfer: the skin friction and the heat transfer rate at several Mach numbers." },
];
const QUERIES = ["wind tunnel flutter", "heat transfer", "interface temperature", "mach speed tunnel"];

/** The tables as the previous version made them on PostgreSQL (its COLLECTIONS_PG_SCHEMA, collections part). */
const OLD_SCHEMA = `
CREATE TABLE quarry_collections (account TEXT NOT NULL, name TEXT NOT NULL, description TEXT, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, PRIMARY KEY (account, name));
CREATE TABLE quarry_collection_docs (account TEXT NOT NULL, collection TEXT NOT NULL, id TEXT NOT NULL, url TEXT, title TEXT, hash TEXT NOT NULL, passages INTEGER NOT NULL, bytes BIGINT NOT NULL, metadata TEXT, updated_at BIGINT NOT NULL, PRIMARY KEY (account, collection, id));
CREATE TABLE quarry_collection_stats (account TEXT NOT NULL, collection TEXT NOT NULL, passages BIGINT NOT NULL, length DOUBLE PRECISION NOT NULL, PRIMARY KEY (account, collection));
CREATE TABLE quarry_collection_df (account TEXT NOT NULL, collection TEXT NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL, PRIMARY KEY (account, collection, term));
CREATE TABLE quarry_collection_chunks (id BIGSERIAL PRIMARY KEY, account TEXT NOT NULL, collection TEXT NOT NULL, doc_id TEXT NOT NULL, heading TEXT, body TEXT NOT NULL, length DOUBLE PRECISION NOT NULL, tsv tsvector NOT NULL);
CREATE INDEX quarry_collection_chunks_doc ON quarry_collection_chunks (account, collection, doc_id);
CREATE INDEX quarry_collection_chunks_tsv ON quarry_collection_chunks USING GIN (tsv);
`;

/** The collections' tables as data format 2 made them on PostgreSQL (its COLLECTIONS_PG_SCHEMA). */
const FORMAT2_SCHEMA = `
CREATE TABLE quarry_collections (account TEXT NOT NULL, name TEXT NOT NULL, description TEXT, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
  held_documents BIGINT NOT NULL DEFAULT 0, held_bytes BIGINT NOT NULL DEFAULT 0, next_passage BIGINT NOT NULL DEFAULT 1, PRIMARY KEY (account, name));
CREATE TABLE quarry_collection_docs (account TEXT NOT NULL, collection TEXT NOT NULL, id TEXT NOT NULL, url TEXT, title TEXT, hash TEXT NOT NULL, passages INTEGER NOT NULL, bytes BIGINT NOT NULL, metadata TEXT, updated_at BIGINT NOT NULL, PRIMARY KEY (account, collection, id));
CREATE INDEX quarry_collection_docs_account ON quarry_collection_docs (account);
CREATE TABLE quarry_collection_stats (account TEXT NOT NULL, collection TEXT NOT NULL, passages BIGINT NOT NULL, length DOUBLE PRECISION NOT NULL, PRIMARY KEY (account, collection));
CREATE TABLE quarry_collection_texts (account TEXT NOT NULL, collection TEXT NOT NULL, doc_id TEXT NOT NULL, first BIGINT NOT NULL, headings TEXT[] NOT NULL, bodies TEXT[] NOT NULL, PRIMARY KEY (account, collection, doc_id));
CREATE UNIQUE INDEX quarry_collection_texts_first ON quarry_collection_texts (account, collection, first);
CREATE TABLE quarry_collection_blocks (account TEXT NOT NULL, collection TEXT NOT NULL, term TEXT NOT NULL, block INTEGER NOT NULL, n INTEGER NOT NULL, items BIGINT[] NOT NULL,
  PRIMARY KEY (account, collection, term, block)) WITH (fillfactor = 75);
ALTER TABLE quarry_collection_blocks ALTER COLUMN items SET STORAGE MAIN;
`;

/**
 * A collection as data format 2 wrote it: passages numbered from 1, each document's texts in a row, and each
 * term's entries (passage × 2^28 + weighted count × 2^14 + weighted length) in blocks of at most `perBlock`
 * (the store wrote 128; fewer here, so that a term spans several blocks). The first passage is numbered
 * `from`, as in a collection whose first documents were replaced.
 */
async function writeFormat2(pool: pg.Pool, account: string, name: string, pages: typeof PAGES, perBlock: number, from: number) {
  let passages = 0, length = 0, next = from;
  const postings = new Map<string, bigint[]>();
  const docs = await Promise.all(pages.map((p) => toIndexed(p)));
  for (const d of docs) {
    await pool.query("INSERT INTO quarry_collection_docs VALUES ($1, $2, $3, NULL, $4, $5, $6, 0, NULL, 1)", [account, name, d.id, d.title, d.hash, d.passages.length]);
    await pool.query("INSERT INTO quarry_collection_texts VALUES ($1, $2, $3, $4, $5, $6)", [account, name, d.id, next, d.passages.map((p) => p.heading), d.passages.map((p) => p.text)]);
    for (const p of d.passages) {
      const a = analyzePassage(d.title, p.heading, p.text);
      passages++;
      length += a.length;
      for (const [t, f] of weightedCounts(a)) {
        if (!postings.has(t)) postings.set(t, []);
        postings.get(t)!.push((BigInt(next) << 28n) | (BigInt(f) << 14n) | BigInt(a.length));
      }
      next++;
    }
  }
  await pool.query("INSERT INTO quarry_collections VALUES ($1, $2, NULL, 1, 1, $3, 0, $4)", [account, name, docs.length, next]);
  await pool.query("INSERT INTO quarry_collection_stats VALUES ($1, $2, $3, $4)", [account, name, passages, length]);
  for (const [t, items] of postings) {
    for (let i = 0; i * perBlock < items.length; i++) {
      const part = items.slice(i * perBlock, (i + 1) * perBlock).map(String);
      await pool.query("INSERT INTO quarry_collection_blocks VALUES ($1, $2, $3, $4, $5, $6::bigint[])", [account, name, t, i, part.length, part]);
    }
  }
  return passages;
}

async function rankings(s: CollectionStore, name: string, account = "acme") {
  const out: [string, string[]][] = [];
  for (const q of QUERIES) out.push([q, (await searchCollection(s, account, name, q, { maxResults: 10 })).map((d) => `${d.id} ${d.score.toFixed(9)} ${d.passages.map((p) => `${p.heading}|${p.text}`).join(" ")}`)]);
  return out;
}

describe("PostgreSQL collections made before the postings blocks", () => {
  let drop = async () => {};
  let pool: pg.Pool;
  afterAll(async () => {
    await pool?.end();
    await drop();
  });

  it("are read into the new tables at start: same answers as a collection filled now, and they change and go as new ones do", async () => {
    const db = await tempDatabase("collupgrade");
    drop = db.drop;
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    await pool.query(OLD_SCHEMA);
    // One collection as the old store wrote it: documents, a row per passage, its statistics and term counts.
    await pool.query("INSERT INTO quarry_collections VALUES ('acme', 'old', NULL, 1, 1)");
    let passages = 0, length = 0;
    const df = new Map<string, number>();
    for (const d of await Promise.all(PAGES.map((p) => toIndexed(p)))) {
      await pool.query("INSERT INTO quarry_collection_docs VALUES ('acme', 'old', $1, NULL, $2, $3, $4, 0, NULL, 1)", [d.id, d.title, d.hash, d.passages.length]);
      for (const p of d.passages) {
        const a = analyzePassage(d.title, p.heading, p.text);
        passages++;
        length += a.length;
        for (const t of a.distinct) df.set(t, (df.get(t) ?? 0) + 1);
        await pool.query("INSERT INTO quarry_collection_chunks (account, collection, doc_id, heading, body, length, tsv) VALUES ('acme', 'old', $1, $2, $3, $4, to_tsvector('simple', $3))", [d.id, p.heading, p.text, a.length]);
      }
    }
    await pool.query("INSERT INTO quarry_collection_stats VALUES ('acme', 'old', $1, $2)", [passages, length]);
    for (const [t, n] of df) await pool.query("INSERT INTO quarry_collection_df VALUES ('acme', 'old', $1, $2)", [t, n]);

    // This version's schema (as its migrations apply it), then the store's start.
    await pool.query(COLLECTIONS_PG_SCHEMA);
    const s = new SqlCollectionStore(pgDriver(pool));
    await s.init();
    const left = await pool.query("SELECT relname FROM pg_class WHERE relname IN ('quarry_collection_chunks', 'quarry_collection_df', 'quarry_collection_chunks_tsv')");
    expect(left.rows).toEqual([]);
    await s.create("acme", "fresh", null, 1);
    await addDocuments(s, "acme", "fresh", PAGES, null, 2);
    const old = await rankings(s, "old");
    expect(old.every(([, hits]) => hits.length > 0)).toBe(true);
    expect(old).toEqual(await rankings(s, "fresh"));
    expect((await s.get("acme", "old"))!.passages).toBe(passages);

    // Replaced and removed documents of the upgraded collection leave its statistics and postings right.
    const changed = [{ ...PAGES[2]!, markdown: "The wind tunnel was rebuilt for heat transfer tests." }];
    for (const name of ["old", "fresh"]) {
      expect(await addDocuments(s, "acme", name, changed, null, 3)).toEqual({ added: [], replaced: ["tunnel"], unchanged: [] });
      expect(await s.removeDocument("acme", name, "wing-flutter")).toBe(true);
    }
    expect(await rankings(s, "old")).toEqual(await rankings(s, "fresh"));
    expect(await s.remove("acme", "old")).toBe(true);
    const rest = await pool.query("SELECT (SELECT count(*) FROM quarry_collection_texts WHERE collection = 'old')::int AS texts, (SELECT count(*) FROM quarry_collection_blocks WHERE collection = 'old')::int AS blocks");
    expect(rest.rows[0]).toEqual({ texts: 0, blocks: 0 });
  });

  it("data format 2's postings blocks (bigint[]) are converted at start: same answers as collections filled now, and they change and go as new ones do", async () => {
    const db = await tempDatabase("collupgrade2");
    const pool2 = new pg.Pool({ connectionString: db.url, max: 2 });
    try {
      await pool2.query(FORMAT2_SCHEMA);
      // Two accounts' collections, so the conversion passes from one collection's terms to the next.
      const passages = await writeFormat2(pool2, "acme", "old", PAGES, 2, 1);
      await writeFormat2(pool2, "beta", "old", PAGES.slice(1, 3), 1, 40);
      expect((await pool2.query("SELECT count(*)::int AS n FROM quarry_collection_blocks WHERE term = 'heat' AND account = 'acme'")).rows[0].n).toBeGreaterThan(1);

      await pool2.query(COLLECTIONS_PG_SCHEMA);
      const s = new SqlCollectionStore(pgDriver(pool2));
      await s.init();
      // Starting again finds nothing left to convert.
      await new SqlCollectionStore(pgDriver(pool2)).init();
      const columns = await pool2.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'quarry_collection_blocks' ORDER BY column_name");
      expect(columns.rows.map((r) => r.column_name)).toEqual(["account", "block", "collection", "items", "last", "term"]);
      expect((await pool2.query("SELECT to_regclass('quarry_collection_blocks_format2') AS t")).rows[0].t).toBeNull();

      for (const [account, pages] of [["acme", PAGES], ["beta", PAGES.slice(1, 3)]] as const) {
        await s.create(account, "fresh", null, 1);
        await addDocuments(s, account, "fresh", pages, null, 2);
        const old = await rankings(s, "old", account);
        expect(old.some(([, hits]) => hits.length > 0)).toBe(true);
        expect(old).toEqual(await rankings(s, "fresh", account));
      }
      expect((await s.get("acme", "old"))!.passages).toBe(passages);

      // Replaced, removed and added documents of the converted collection leave its postings right.
      const changed = [{ ...PAGES[2]!, markdown: "The wind tunnel was rebuilt for heat transfer tests." }];
      const extra = { id: "nozzle", title: "Nozzle flow", markdown: "Flow through a supersonic nozzle of a wind tunnel, with heat transfer at the throat." };
      for (const name of ["old", "fresh"]) {
        expect(await addDocuments(s, "acme", name, changed, null, 3)).toEqual({ added: [], replaced: ["tunnel"], unchanged: [] });
        expect(await s.removeDocument("acme", name, "wing-flutter")).toBe(true);
        expect((await addDocuments(s, "acme", name, [extra], null, 4)).added).toEqual(["nozzle"]);
      }
      expect(await rankings(s, "old")).toEqual(await rankings(s, "fresh"));
      expect(await s.remove("acme", "old")).toBe(true);
      const rest = await pool2.query("SELECT (SELECT count(*) FROM quarry_collection_texts WHERE account = 'acme' AND collection = 'old')::int AS texts, (SELECT count(*) FROM quarry_collection_blocks WHERE account = 'acme' AND collection = 'old')::int AS blocks");
      expect(rest.rows[0]).toEqual({ texts: 0, blocks: 0 });
    } finally {
      await pool2.end();
      await db.drop();
    }
  });
});
