/** The CollectionStore contract on SQLite (FTS5) and PostgreSQL (full-text search), through the code that serves collections. */
import Database from "better-sqlite3";
import pg from "pg";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COLLECTIONS_PG_SCHEMA, COLLECTIONS_SQLITE_SCHEMA, SqlCollectionStore } from "../../adapters/collections/sql-store.ts";
import { pgDriver, sqliteDriver } from "../../adapters/jobs/sql-drivers.ts";
import type { SyncSqlite } from "../../adapters/storage/sqlite-counters.ts";
import { analyzePassage } from "../../core/collections/analyze.ts";
import { addDocuments, searchCollection, toIndexed } from "../../core/collections/service.ts";
import type { CollectionStore } from "../../core/ports/collections.ts";
import { tempDatabase } from "../helpers/pg.ts";
import { tempDir } from "../helpers/temp.ts";

const DOCS = [
  { id: "refunds", url: "https://help.example.org/billing/refunds", title: "Refunds", markdown: "# Refunds\n\nRefunds are paid back to the card you paid with, within 14 days of the request.\n\n## Exceptions\n\nGift cards are never refunded." },
  { id: "shipping", url: "https://help.example.org/orders/shipping", title: "Shipping", markdown: "# Shipping\n\nOrders ship from our warehouse in Leeds within two working days.\n\n## Tracking\n\nA tracking link is emailed when the parcel leaves." },
  { id: "accounts", url: "https://docs.example.com/accounts", title: "Accounts", markdown: "# Accounts\n\nYou can close your account from the settings page. Closing it deletes your order history." },
];

/**
 * A small set to rank (written for these tests): pages that share words, so the order depends on how often a
 * term occurs, how rare it is in the collection, how long the passage is and whether the title holds it.
 */
const RANKED = [
  { id: "wing-flutter", title: "Flutter of swept wings", markdown: "Flutter of a swept wing at high subsonic speed was measured in a wind tunnel. The flutter speed fell as the sweep grew." },
  { id: "wing-lift", title: "Lift of a wing in a slipstream", markdown: "The lift of a wing behind a propeller rises with the slipstream velocity. Wind tunnel tests at several angles of attack." },
  { id: "heat-slab", title: "Heat conduction in composite slabs", markdown: "Transient heat conduction through a composite slab of two materials, solved in closed form. The interface temperature is given." },
  { id: "heat-nose", title: "Heating of a blunt nose", markdown: "Aerodynamic heating of a blunt nose at hypersonic speed. Heat transfer at the stagnation point was measured in a shock tunnel." },
  { id: "boundary", title: "Boundary layer on a flat plate", markdown: "A laminar boundary layer on a flat plate with heat transfer: the skin friction and the heat transfer rate at several Mach numbers. The plate was long, the flow steady, the pressure gradient nil, and the measurements were made far behind the leading edge where the layer had grown thick." },
  { id: "tunnel", title: "A new wind tunnel", markdown: "The wind tunnel of the laboratory runs at speeds up to Mach 3. Its test section, its nozzle and its balance are described." },
];
const RANK_QUERIES = ["transient wind tunnel", "wind tunnel flutter", "flutter of swept wings at high speed", "heat transfer measured in a tunnel", "wind tunnel", "heat conduction in slabs", "boundary layer heat transfer on a plate", "lift of wings"];

/** Each query's documents and their scores (to 9 digits), as searchCollection answers. */
async function rankings(s: CollectionStore, account: string, name: string, limit = 20) {
  const out: [string, string[]][] = [];
  for (const q of RANK_QUERIES) {
    const hits = await s.search(account, name, q.split(" ").filter((w) => !["of", "at", "in", "a", "on"].includes(w)), limit);
    out.push([q, hits.map((h) => `${h.docId} ${h.score.toFixed(9)}`)]);
  }
  return out;
}

function contract(make: () => Promise<CollectionStore>) {
  let s: CollectionStore;
  beforeAll(async () => {
    s = await make();
  });

  it("creates a collection once per account and name; another account may use the name", async () => {
    expect(await s.create("acme", "help", "Help centre", 1_000)).toMatchObject({ name: "help", description: "Help centre", documents: 0, passages: 0, bytes: 0, created_at: new Date(1_000).toISOString() });
    expect(await s.create("acme", "help", null, 2_000)).toBeNull();
    expect(await s.create("other", "help", null, 2_000)).toMatchObject({ name: "help", documents: 0 });
  });

  it("adds documents, counts their passages and bytes, and finds the passage that answers, with its heading", async () => {
    const out = await addDocuments(s, "acme", "help", DOCS, null, 3_000);
    expect(out).toEqual({ added: ["refunds", "shipping", "accounts"], replaced: [], unchanged: [] });
    const info = (await s.get("acme", "help"))!;
    expect(info.documents).toBe(3);
    expect(info.passages).toBeGreaterThanOrEqual(5);
    expect(info.bytes).toBeGreaterThan(200);
    const [first] = await searchCollection(s, "acme", "help", "when are refunds paid back?", { maxResults: 5 });
    expect(first).toMatchObject({ id: "refunds", url: DOCS[0]!.url, title: "Refunds", score: 1 });
    expect(first!.passages[0]).toMatchObject({ heading: "Refunds" });
    expect(first!.passages[0]!.text).toMatch(/within 14 days/);
    // Stemming: "shipped" finds "ship"; the heading path is kept for a sub-section.
    const [ship] = await searchCollection(s, "acme", "help", "parcel tracking emailed", { maxResults: 5 });
    expect(ship).toMatchObject({ id: "shipping" });
    expect(ship!.passages[0]!.heading).toBe("Shipping › Tracking");
    expect((await searchCollection(s, "acme", "help", "orders shipped", { maxResults: 5 }))[0]).toMatchObject({ id: "shipping" });
  });

  it("reads a document back with its passages in order, each with its heading; another account's is not there", async () => {
    const doc = (await s.document("acme", "help", "shipping"))!;
    expect(doc).toMatchObject({ id: "shipping", url: DOCS[1]!.url, title: "Shipping" });
    expect(doc.text).toHaveLength(doc.passages);
    expect(doc.text.map((p) => p.heading)).toEqual(["Shipping", "Shipping › Tracking"]);
    expect(doc.text[0]!.text).toMatch(/warehouse in Leeds/);
    expect(doc.text[1]!.text).toMatch(/tracking link is emailed/);
    expect(await s.document("other", "help", "shipping")).toBeNull();
    expect(await s.document("acme", "help", "nothing-here")).toBeNull();
  });

  it("never shows one account's documents to another, even under the same collection name", async () => {
    expect(await searchCollection(s, "other", "help", "refunds", { maxResults: 5 })).toEqual([]);
    expect(await s.documents("other", "help", 0, 100)).toEqual([]);
    expect(await s.removeDocument("other", "help", "refunds")).toBe(false);
    expect((await s.get("acme", "help"))!.documents).toBe(3);
  });

  it("leaves a document sent again unchanged, replaces a changed one without doubling its passages, and removes one", async () => {
    const before = (await s.get("acme", "help"))!;
    const again = await addDocuments(s, "acme", "help", [DOCS[1]!, { ...DOCS[0]!, markdown: "# Refunds\n\nRefunds now take 30 days to reach your bank." }], null, 4_000);
    expect(again).toEqual({ added: [], replaced: ["refunds"], unchanged: ["shipping"] });
    const hits = await searchCollection(s, "acme", "help", "refunds", { maxResults: 5 });
    expect(hits.filter((h) => h.id === "refunds")).toHaveLength(1);
    expect(hits[0]!.passages.map((p) => p.text).join(" ")).toMatch(/30 days/);
    expect(hits[0]!.passages.map((p) => p.text).join(" ")).not.toMatch(/14 days/);
    expect((await s.get("acme", "help"))!.passages).toBeLessThan(before.passages);
    expect(await s.removeDocument("acme", "help", "accounts")).toBe(true);
    expect(await searchCollection(s, "acme", "help", "close account settings", { maxResults: 5 })).toEqual([]);
    expect((await s.documents("acme", "help", 0, 100)).map((d) => d.id)).toEqual(["refunds", "shipping"]);
  });

  it("refuses what would pass the account's document limit, adding nothing of that request", async () => {
    await s.create("small", "a", null, 1);
    await s.create("small", "b", null, 1);
    const docs = await Promise.all(["one", "two", "three"].map((w) => toIndexed({ id: w, markdown: `Document ${w} about limits.` })));
    expect(await s.put("small", "a", docs.slice(0, 2), { maxDocuments: 3, now: 2 })).toMatchObject({ ok: true });
    // Two more in another collection of the account: the limit counts all of them.
    expect(await s.put("small", "b", docs.slice(1, 3), { maxDocuments: 3, now: 3 })).toEqual({ ok: false, reason: "index_full", cap: "index_documents", held: 2, adding: 2, limit: 3 });
    expect((await s.get("small", "b"))!.documents).toBe(0);
    // A document already there does not count again.
    expect(await s.put("small", "a", docs.slice(0, 3), { maxDocuments: 3, now: 4 })).toMatchObject({ ok: true, outcome: { added: ["three"], unchanged: ["one", "two"] } });
    expect(await s.put("small", "missing", docs, { maxDocuments: null, now: 5 })).toEqual({ ok: false, reason: "no_collection" });
  });

  it("refuses what would pass the account's bytes of text, counting a replaced document's difference, as `bytes` counts them", async () => {
    await s.create("bytes", "a", null, 1);
    await s.create("bytes", "b", null, 1);
    const doc = (id: string, words: number) => toIndexed({ id, markdown: `${"lorem ".repeat(words).trim()}.` });
    const [one, two] = await Promise.all([doc("one", 100), doc("two", 100)]);
    const size = 600; // "lorem " × 100 less the last space, and the full stop
    expect(await s.put("bytes", "a", [one!], { maxDocuments: null, maxBytes: 2 * size, now: 2 })).toMatchObject({ ok: true });
    expect((await s.get("bytes", "a"))!.bytes).toBe(size);
    // Another collection of the account counts: one more byte than the cap leaves room for is refused, nothing added.
    const big = await doc("big", 101);
    expect(await s.put("bytes", "b", [two!, big], { maxDocuments: null, maxBytes: 2 * size, now: 3 })).toEqual({ ok: false, reason: "index_full", cap: "index_bytes", held: size, adding: 2 * size + 6, limit: 2 * size });
    expect((await s.get("bytes", "b"))!).toMatchObject({ documents: 0, bytes: 0 });
    expect(await s.put("bytes", "b", [two!], { maxDocuments: null, maxBytes: 2 * size, now: 4 })).toMatchObject({ ok: true, outcome: { added: ["two"] } });
    // Full: sending the same documents again adds nothing and is not refused; a replacement counts its difference.
    expect(await s.put("bytes", "a", [one!], { maxDocuments: null, maxBytes: 2 * size, now: 5 })).toMatchObject({ ok: true, outcome: { unchanged: ["one"] } });
    const grown = await doc("one", 101);
    expect(await s.put("bytes", "a", [grown], { maxDocuments: null, maxBytes: 2 * size, now: 6 })).toMatchObject({ ok: false, cap: "index_bytes", held: 2 * size, adding: 6 });
    const shrunk = await doc("one", 50);
    expect(await s.put("bytes", "a", [shrunk], { maxDocuments: null, maxBytes: 2 * size, now: 7 })).toMatchObject({ ok: true, outcome: { replaced: ["one"] } });
    // Now 300 bytes are free: a replacement that grows by exactly that fits.
    expect(await s.put("bytes", "a", [grown], { maxDocuments: null, maxBytes: 2 * size + 6, now: 8 })).toMatchObject({ ok: true, outcome: { replaced: ["one"] } });
    const infos = await s.list("bytes");
    expect(infos.reduce((n, c) => n + c.bytes, 0)).toBe(2 * size + 6);
    // The documents' own sizes add up to the collection's.
    expect((await s.documents("bytes", "a", 0, 10)).map((d) => d.bytes)).toEqual([size + 6]);
    // Removing a document frees its bytes.
    expect(await s.removeDocument("bytes", "b", "two")).toBe(true);
    expect(await s.put("bytes", "b", [await doc("three", 99)], { maxDocuments: null, maxBytes: 2 * size + 6, now: 9 })).toMatchObject({ ok: true });
  });

  it("never lets puts at once pass the caps, into one collection or several", async () => {
    for (const c of ["p", "q", "r", "s"]) await s.create("racing", c, null, 1);
    const docs = await Promise.all(Array.from({ length: 24 }, (_, i) => toIndexed({ id: `d${i}`, markdown: `Racing document number ${String(i).padStart(2, "0")} ${"words ".repeat(40)}` })));
    const each = (await s.put("racing", "p", [docs[0]!], { maxDocuments: null, now: 2 }), (await s.get("racing", "p"))!.bytes);
    expect(await s.removeDocument("racing", "p", "d0")).toBe(true);
    // Room for 10 documents' bytes; 24 puts of one document each, 6 into each collection, all at once.
    const out = await Promise.all(docs.map((d, i) => s.put("racing", ["p", "q", "r", "s"][i % 4]!, [d], { maxDocuments: null, maxBytes: 10 * each, now: 3 })));
    expect(out.filter((r) => r.ok)).toHaveLength(10);
    expect(out.filter((r) => !r.ok).every((r) => !r.ok && r.reason === "index_full" && r.cap === "index_bytes")).toBe(true);
    const held = (await s.list("racing")).reduce((n, c) => n + c.bytes, 0);
    expect(held).toBe(10 * each);
    // The same for the document count.
    for (const c of ["p", "q", "r", "s"]) await s.remove("racing", c);
    for (const c of ["p", "q", "r", "s"]) await s.create("racing", c, null, 4);
    const counted = await Promise.all(docs.map((d, i) => s.put("racing", ["p", "q", "r", "s"][i % 4]!, [d], { maxDocuments: 7, now: 5 })));
    expect(counted.filter((r) => r.ok)).toHaveLength(7);
    expect((await s.list("racing")).reduce((n, c) => n + c.documents, 0)).toBe(7);
  });

  it("filters by domain and bounds the passages' tokens", async () => {
    await addDocuments(s, "acme", "help", [DOCS[2]!], null, 6_000);
    const onlyDocs = await searchCollection(s, "acme", "help", "account orders refunds", { maxResults: 5, includeDomains: ["docs.example.com"] });
    expect(onlyDocs.map((d) => d.id)).toEqual(["accounts"]);
    const notDocs = await searchCollection(s, "acme", "help", "account orders refunds", { maxResults: 5, excludeDomains: ["example.com"] });
    expect(notDocs.map((d) => d.id).sort()).toEqual(["refunds", "shipping"]);
    const all = await searchCollection(s, "acme", "help", "refunds shipping tracking warehouse parcel", { maxResults: 5 });
    expect(all.find((d) => d.id === "shipping")!.passages.length).toBe(2);
    // Past max_tokens only each document's best passage is kept.
    const bounded = await searchCollection(s, "acme", "help", "refunds shipping tracking warehouse parcel", { maxResults: 5, maxTokens: 1 });
    expect(bounded.map((d) => d.passages.length)).toEqual(bounded.map(() => 1));
  });

  it("ranks by BM25 over its own statistics: rarer terms, more of them, the title, shorter passages", async () => {
    await s.create("acme", "ranked", null, 1);
    await addDocuments(s, "acme", "ranked", RANKED, null, 2);
    const ids = async (q: string) => (await searchCollection(s, "acme", "ranked", q, { maxResults: 10 })).map((d) => d.id);
    // The page with both words first, then the one with "wind" in its title, then the one with "wind" in its text.
    expect(await ids("flutter in the wind")).toEqual(["wing-flutter", "tunnel", "wing-lift"]);
    // The title says it: the page titled "Heat conduction" before the one that only says "heat" often in a long text.
    expect((await ids("heat conduction"))[0]).toBe("heat-slab");
    // Stop words are not searched: a query of them alone finds nothing rather than everything.
    expect(await ids("of the and")).toEqual([]);
    // Another collection's words do not change this one's ranking (statistics are per collection).
    const before = await rankings(s, "acme", "ranked");
    await s.create("acme", "noise", null, 3);
    await addDocuments(s, "acme", "noise", [{ id: "n", title: "Flutter flutter", markdown: "Flutter, flutter, heat, heat, wind, tunnel, wing, wing." }], null, 4);
    expect(await rankings(s, "acme", "ranked")).toEqual(before);
  });

  it("keeps its statistics right through replacements and removals: it ranks as one filled with what is left", async () => {
    await s.create("acme", "churn", null, 1);
    await addDocuments(s, "acme", "churn", RANKED.map((d) => ({ ...d, markdown: `${d.markdown} Wind tunnel flutter.` })), null, 2);
    await addDocuments(s, "acme", "churn", RANKED, null, 3);
    expect(await s.removeDocument("acme", "churn", "tunnel")).toBe(true);
    await s.create("acme", "fresh", null, 4);
    await addDocuments(s, "acme", "fresh", RANKED.filter((d) => d.id !== "tunnel"), null, 5);
    expect(await rankings(s, "acme", "churn")).toEqual(await rankings(s, "acme", "fresh"));
  });

  it("deletes a collection with everything in it", async () => {
    expect(await s.remove("acme", "help")).toBe(true);
    expect(await s.get("acme", "help")).toBeNull();
    expect(await s.remove("acme", "help")).toBe(false);
    await s.create("acme", "help", null, 7_000);
    expect(await searchCollection(s, "acme", "help", "refunds", { maxResults: 5 })).toEqual([]);
    expect(await s.get("other", "help")).not.toBeNull();
  });
}

describe("SqlCollectionStore on SQLite (FTS5)", () => {
  const db = new Database(join(tempDir("quarry-coll-"), "c.db"));
  afterAll(() => db.close());
  contract(async () => {
    const s = new SqlCollectionStore(sqliteDriver(db as unknown as SyncSqlite));
    await s.init();
    return s;
  });
});

describe("SqlCollectionStore on PostgreSQL (full-text search)", () => {
  let drop = async () => {};
  let pool: pg.Pool;
  afterAll(async () => {
    await pool?.end();
    await drop();
  });
  contract(async () => {
    const db = await tempDatabase("coll");
    drop = db.drop;
    pool = new pg.Pool({ connectionString: db.url, max: 4 });
    await pool.query(COLLECTIONS_PG_SCHEMA);
    return new SqlCollectionStore(pgDriver(pool));
  });
});

describe("SQLite and PostgreSQL rank a collection alike", () => {
  let drop = async () => {};
  let pool: pg.Pool;
  const db0 = new Database(":memory:");
  afterAll(async () => {
    db0.close();
    await pool?.end();
    await drop();
  });

  it("gives the same documents in the same order with the same scores", async () => {
    const lite = new SqlCollectionStore(sqliteDriver(db0 as unknown as SyncSqlite));
    await lite.init();
    const made = await tempDatabase("collrank");
    drop = made.drop;
    pool = new pg.Pool({ connectionString: made.url, max: 2 });
    await pool.query(COLLECTIONS_PG_SCHEMA);
    const pgs = new SqlCollectionStore(pgDriver(pool));
    for (const s of [lite, pgs]) {
      await s.create("acme", "ranked", null, 1);
      await addDocuments(s, "acme", "ranked", RANKED, null, 2);
    }
    const a = await rankings(lite, "acme", "ranked");
    expect(a.every(([, hits]) => hits.length >= 2)).toBe(true);
    expect(await rankings(pgs, "acme", "ranked")).toEqual(a);
    // Scoring in two passes (MaxScore, which large collections take) changes nothing, asked for any number of passages.
    for (const limit of [1, 2, 3, 20]) {
      for (const db of [sqliteDriver(db0 as unknown as SyncSqlite), pgDriver(pool)]) {
        const twoPass = new SqlCollectionStore(db, { postings: 0, firstPass: 0 });
        expect(await rankings(twoPass, "acme", "ranked", limit)).toEqual(a.map(([q, hits]) => [q, hits.slice(0, limit)]));
      }
    }
  });
});

describe("collections made before the stores ranked alike", () => {
  it("SQLite: are carried over from the porter FTS5 table, searchable and ranked as new ones", async () => {
    const db = new Database(":memory:");
    // The tables as the previous version made them, with one collection in them.
    db.exec(`CREATE TABLE quarry_collection_passages (rowid INTEGER PRIMARY KEY, account TEXT NOT NULL, collection TEXT NOT NULL, doc_id TEXT NOT NULL);
      CREATE VIRTUAL TABLE quarry_collection_fts USING fts5(title, heading, body, tokenize = 'porter unicode61 remove_diacritics 2');`);
    db.exec(COLLECTIONS_SQLITE_SCHEMA.replace(/CREATE (VIRTUAL TABLE|TABLE|INDEX) IF NOT EXISTS quarry_collection_(chunks|terms|postings)[^;]*;/g, ""));
    db.prepare("INSERT INTO quarry_collections (account, name, description, created_at, updated_at) VALUES ('acme', 'old', NULL, 1, 1)").run();
    const docs = await Promise.all(RANKED.map((d) => toIndexed(d)));
    for (const d of docs) {
      db.prepare("INSERT INTO quarry_collection_docs (account, collection, id, url, title, hash, passages, bytes, metadata, updated_at) VALUES ('acme', 'old', ?, NULL, ?, ?, ?, 0, NULL, 1)").run(d.id, d.title, d.hash, d.passages.length);
      for (const p of d.passages) {
        const { lastInsertRowid } = db.prepare("INSERT INTO quarry_collection_passages (account, collection, doc_id) VALUES ('acme', 'old', ?)").run(d.id);
        db.prepare("INSERT INTO quarry_collection_fts (rowid, title, heading, body) VALUES (?, ?, ?, ?)").run(lastInsertRowid, d.title ?? "", p.heading ?? "", p.text);
      }
    }
    const again = new SqlCollectionStore(sqliteDriver(db as unknown as SyncSqlite));
    await again.init();
    await again.create("acme", "fresh", null, 1);
    await addDocuments(again, "acme", "fresh", RANKED, null, 2);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name IN ('quarry_collection_fts', 'quarry_collection_passages')").all()).toEqual([]);
    expect(await rankings(again, "acme", "old")).toEqual(await rankings(again, "acme", "fresh"));
    db.close();
  });

  it("SQLite: are carried over from the index of terms as they occur to the index of weighted counts", async () => {
    const db = new Database(":memory:");
    const store = new SqlCollectionStore(sqliteDriver(db as unknown as SyncSqlite));
    await store.init();
    await store.create("acme", "old", null, 1);
    await addDocuments(store, "acme", "old", RANKED, null, 2);
    const expected = await rankings(store, "acme", "old");
    // The index as the previous version kept it: a column per field, every occurrence of each term.
    db.exec(`DROP TABLE quarry_collection_tf_postings; DROP TABLE quarry_collection_tf;
      CREATE VIRTUAL TABLE quarry_collection_terms USING fts5(title, heading, body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0');
      CREATE VIRTUAL TABLE quarry_collection_postings USING fts5vocab(quarry_collection_terms, instance);`);
    const put = db.prepare("INSERT INTO quarry_collection_terms (rowid, title, heading, body) VALUES (?, ?, ?, ?)");
    for (const r of db.prepare("SELECT c.rowid, d.title, c.heading, c.body FROM quarry_collection_chunks c JOIN quarry_collection_docs d ON d.id = c.doc_id").all() as { rowid: number; title: string | null; heading: string | null; body: string }[]) {
      const a = analyzePassage(r.title, r.heading, r.body);
      put.run(r.rowid, a.title.join(" "), a.heading.join(" "), a.body.join(" "));
    }
    const again = new SqlCollectionStore(sqliteDriver(db as unknown as SyncSqlite));
    await again.init();
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name IN ('quarry_collection_terms', 'quarry_collection_postings')").all()).toEqual([]);
    expect(await rankings(again, "acme", "old")).toEqual(expected);
    // Removing and replacing documents works on the converted index.
    expect(await again.removeDocument("acme", "old", "tunnel")).toBe(true);
    await again.create("acme", "fresh", null, 3);
    await addDocuments(again, "acme", "fresh", RANKED.filter((d) => d.id !== "tunnel"), null, 4);
    expect(await rankings(again, "acme", "old")).toEqual(await rankings(again, "acme", "fresh"));
    db.close();
  });
});

describe("collections made before the stores kept what each holds (held_documents, held_bytes)", () => {
  /** An account's two collections as the previous version left them: rows in quarry_collection_docs, no held columns. */
  async function older(q: (sql: string) => Promise<unknown>) {
    await q("INSERT INTO quarry_collections (account, name, description, created_at, updated_at) VALUES ('acme', 'a', NULL, 1, 1), ('acme', 'b', NULL, 1, 1), ('other', 'a', NULL, 1, 1)");
    await q(`INSERT INTO quarry_collection_docs (account, collection, id, url, title, hash, passages, bytes, metadata, updated_at) VALUES
      ('acme', 'a', 'x', NULL, NULL, 'h', 1, 700, NULL, 1), ('acme', 'a', 'y', NULL, NULL, 'h', 1, 200, NULL, 1), ('acme', 'b', 'z', NULL, NULL, 'h', 1, 50, NULL, 1), ('other', 'a', 'x', NULL, NULL, 'h', 1, 5000, NULL, 1)`);
  }
  const check = async (s: SqlCollectionStore) => {
    const one = await toIndexed({ id: "new", markdown: "lorem ".repeat(10).trim() + "." }); // 60 bytes
    expect(await s.put("acme", "b", [one], { maxDocuments: null, maxBytes: 1_000, now: 2 })).toEqual({ ok: false, reason: "index_full", cap: "index_bytes", held: 950, adding: 60, limit: 1_000 });
    expect(await s.put("acme", "b", [one], { maxDocuments: 3, now: 2 })).toMatchObject({ ok: false, cap: "index_documents", held: 3 });
    expect(await s.put("acme", "b", [one], { maxDocuments: 4, maxBytes: 1_010, now: 2 })).toMatchObject({ ok: true });
  };

  it("SQLite: counts them from their documents when it starts, once", async () => {
    const db = new Database(":memory:");
    db.exec(COLLECTIONS_SQLITE_SCHEMA);
    expect(db.prepare("SELECT name FROM pragma_table_info('quarry_collections') WHERE name LIKE 'held_%'").all()).toEqual([]);
    await older(async (sql) => db.exec(sql));
    const s = new SqlCollectionStore(sqliteDriver(db as unknown as SyncSqlite));
    await s.init();
    await s.init();
    await check(s);
    db.close();
  });

  it("PostgreSQL: counts them from their documents in the migration, once", async () => {
    const made = await tempDatabase("collheld");
    const pool = new pg.Pool({ connectionString: made.url, max: 2 });
    try {
      await pool.query(COLLECTIONS_PG_SCHEMA.replace(/DO \$held\$[\s\S]*?END \$held\$;/, ""));
      await older((sql) => pool.query(sql));
      await pool.query(COLLECTIONS_PG_SCHEMA);
      await pool.query(COLLECTIONS_PG_SCHEMA);
      await check(new SqlCollectionStore(pgDriver(pool)));
    } finally {
      await pool.end();
      await made.drop();
    }
  });
});
