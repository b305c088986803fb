/**
 * PostgreSQL collections written by the version that kept a row per passage with a `tsvector` (GIN index) and
 * a table of the terms' passage counts: after the upgrade at start they are searched, ranked, changed and
 * removed like collections made by this version, and the old tables are gone.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { COLLECTIONS_PG_SCHEMA, SqlCollectionStore } from "../../adapters/collections/sql-store.ts";
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

async function rankings(s: CollectionStore, name: string) {
  const out: [string, string[]][] = [];
  for (const q of QUERIES) out.push([q, (await searchCollection(s, "acme", name, q, { maxResults: 10 })).map((d) => `${d.id} ${d.score.toFixed(9)} ${d.passages.map((p) => `${p.heading}|${p.text}`).join(" ")}`)]);
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
});
