/**
 * Both stores rank a collection alike when its terms' postings span many of PostgreSQL's blocks (128
 * entries each) and documents leave and come back: the contract suite's collections are a few passages, so
 * every term's postings fit one block there. The documents are generated (seeded), with common words in
 * most passages, rare ones in a few, and exact copies, so passages tie and the order of ties counts.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { COLLECTIONS_PG_SCHEMA, SqlCollectionStore } from "../../adapters/collections/sql-store.ts";
import { pgDriver, sqliteDriver } from "../../adapters/jobs/sql-drivers.ts";
import type { SyncSqlite } from "../../adapters/storage/sqlite-counters.ts";
import { addDocuments } from "../../core/collections/service.ts";
import type { CollectionStore } from "../../core/ports/collections.ts";
import { tempDatabase } from "../helpers/pg.ts";

const VOCABULARY = ["river", "bridge", "engine", "harbour", "signal", "copper", "meadow", "lantern", "glacier", "orchard", "falcon", "quartz", "violin", "saddle", "tunnel", "marble", "pepper", "canyon", "walnut", "beacon"];

function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
}

/** 420 documents of one to three passages; word i is drawn about 1/(i+1) as often as the first. */
function documents() {
  const r = rng(7);
  const word = () => VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(1 / (r() + 0.05)) - 1)]!;
  const passage = () => Array.from({ length: 4 + Math.floor(r() * 30) }, word).join(" ") + ".";
  const docs = [];
  for (let i = 0; i < 420; i++) {
    const parts = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, j) => `## Part ${j}\n\n${passage()}`);
    docs.push({ id: `d${i}`, url: `https://example.org/${i}`, title: i % 7 === 0 ? word() : null, markdown: parts.join("\n\n") });
  }
  // Exact copies: passages that tie on every query.
  for (let i = 0; i < 30; i++) docs.push({ ...docs[i]!, id: `copy${i}`, url: `https://example.org/copy/${i}` });
  return docs;
}

const QUERIES = ["river", "river bridge", "engine harbour signal", "copper beacon", "walnut canyon pepper marble", "bridge lantern", "falcon violin saddle tunnel river"];

async function rankings(s: CollectionStore, limit: number) {
  const out: string[][] = [];
  for (const q of QUERIES) out.push((await s.search("acme", "gen", q.split(" "), limit)).map((h) => `${h.docId} ${h.heading} ${h.score.toFixed(9)}`));
  return out;
}

describe("postings over many blocks", () => {
  let drop = async () => {};
  let pool: pg.Pool | undefined;
  const db = new Database(":memory:");
  afterAll(async () => {
    db.close();
    await pool?.end();
    await drop();
  });

  it("SQLite and PostgreSQL give the same passages, order and scores, before and after documents leave and return", async () => {
    const made = await tempDatabase("collblocks");
    drop = made.drop;
    pool = new pg.Pool({ connectionString: made.url, max: 2 });
    await pool.query(COLLECTIONS_PG_SCHEMA);
    const lite = new SqlCollectionStore(sqliteDriver(db as unknown as SyncSqlite));
    await lite.init();
    const pgs = new SqlCollectionStore(pgDriver(pool));
    const docs = documents();
    for (const s of [lite, pgs]) {
      await s.create("acme", "gen", null, 1);
      for (let i = 0; i < docs.length; i += 50) await addDocuments(s, "acme", "gen", docs.slice(i, i + 50), null, 2);
    }
    const blocks = await pool.query("SELECT max(block) AS b FROM quarry_collection_blocks WHERE term = 'river'");
    expect(blocks.rows[0].b).toBeGreaterThanOrEqual(3);
    for (const limit of [1, 10, 80, 1000]) {
      const a = await rankings(lite, limit);
      expect(a[0]!.length).toBe(Math.min(limit, a[0]!.length));
      expect(await rankings(pgs, limit)).toEqual(a);
    }
    // Documents leave (their entries come out of the middle of blocks) and some come back (at the end).
    for (const s of [lite, pgs]) {
      for (let i = 10; i < 200; i += 3) await s.removeDocument("acme", "gen", `d${i}`);
      await addDocuments(s, "acme", "gen", docs.slice(10, 100).filter((_, i) => i % 2 === 0), null, 3);
    }
    for (const limit of [10, 80]) expect(await rankings(pgs, limit)).toEqual(await rankings(lite, limit));
    // The copies tie with their originals: ties come in the order the passages were added, on both stores.
    const river = (await lite.search("acme", "gen", ["river"], 1000)).map((h) => h.score);
    expect(new Set(river).size).toBeLessThan(river.length);
  });
});
