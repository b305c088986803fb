/**
 * The collection store on SQL (core/ports/collections.ts), on SQLite and PostgreSQL alike: passages are
 * read by core/collections/analyze.ts (words, stop words out, Porter stems), and both stores rank them
 * with the same BM25F from statistics kept per collection (how many passages hold each term, how many
 * passages and how long), so a collection ranks the same on either. SQLite finds the passages holding
 * a term with FTS5 (a contentless index of the terms, read through fts5vocab); PostgreSQL keeps each
 * term's postings in blocks of varint-coded entries (COLLECTIONS_PG_SCHEMA, postings.ts), read whole for
 * a query's terms only. The passages and their statistics live beside the documents in the same database, so backups
 * and upgrades carry them.
 */
import { analyzePassage, BM25, idf, stem, type AnalyzedPassage } from "../../core/collections/analyze.ts";
import type { CollectionInfo, CollectionStore, DocumentInfo, IndexCaps, IndexedDocument, PassageHit, PassageText, PutResult } from "../../core/ports/collections.ts";
import type { Query, Row, SqlDriver } from "../jobs/sql-drivers.ts";
import { cutBlocks, decodeBlock, decodeInto, encodeBlock, format2Entries, KEY_STEP, type Entry } from "./postings.ts";

const W = BM25.weights;

/** Tables both dialects share (SQLite's FTS5 index is made apart; PostgreSQL's passages carry their tsvector). */
const COMMON_SCHEMA = `
CREATE TABLE IF NOT EXISTS quarry_collections (
  account TEXT NOT NULL, name TEXT NOT NULL, description TEXT,
  created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
  PRIMARY KEY (account, name)
);
CREATE TABLE IF NOT EXISTS quarry_collection_docs (
  account TEXT NOT NULL, collection TEXT NOT NULL, id TEXT NOT NULL,
  url TEXT, title TEXT, hash TEXT NOT NULL, passages INTEGER NOT NULL, bytes BIGINT NOT NULL,
  metadata TEXT, updated_at BIGINT NOT NULL,
  PRIMARY KEY (account, collection, id)
);
CREATE INDEX IF NOT EXISTS quarry_collection_docs_account ON quarry_collection_docs (account);
CREATE TABLE IF NOT EXISTS quarry_collection_stats (
  account TEXT NOT NULL, collection TEXT NOT NULL, passages BIGINT NOT NULL, length DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (account, collection)
);
`;

/** How many passages of a collection hold each term (SQLite keeps it in its primary key's b-tree alone). */
const DF_TABLE = `CREATE TABLE IF NOT EXISTS quarry_collection_df (
  account TEXT NOT NULL, collection TEXT NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL,
  PRIMARY KEY (account, collection, term)
)`;

/**
 * SQLite's index of the terms holds, for each passage and term, the term's weighted count f (Σ field weight ×
 * occurrences, the count BM25F saturates) and nothing else: the columns of the FTS5 table are the bits of f
 * (column "4" holds the terms whose f has the bit 4), so with `detail = column` the postings (fts5vocab's
 * instance rows) give a passage's f as the sum of the columns it holds the term in. It is exact and needs no
 * positions: the index is a third smaller than one of the terms as they occur (detail full, a row per
 * occurrence), and a query reads one row per bit rather than one per occurrence. A term counts at most 255
 * occurrences in a passage (weightedCounts; PostgreSQL's postings count the same), so f < 1024: ten bits. The weights
 * are BM25.weights as the passage is indexed (a change of them reindexes, as `upgrade` does).
 */
const TF_BITS = Array.from({ length: 10 }, (_, i) => 2 ** i);
const MAX_OCCURRENCES = 255;

/**
 * A passage's weighted count f of each of its terms (Σ field weight × occurrences, title 3, heading 2, text 1),
 * counting at most MAX_OCCURRENCES occurrences of a term: the one count both stores index, so they score alike.
 */
export function weightedCounts(a: AnalyzedPassage): Map<string, number> {
  const f = new Map<string, number>(), seen = new Map<string, number>();
  const add = (terms: string[], weight: number) => {
    for (const t of terms) {
      const n = seen.get(t) ?? 0;
      if (n >= MAX_OCCURRENCES) continue;
      seen.set(t, n + 1);
      f.set(t, (f.get(t) ?? 0) + weight);
    }
  };
  add(a.title, W.title);
  add(a.heading, W.heading);
  add(a.body, W.body);
  return f;
}

/** A passage's terms, each in the columns of its weighted count's bits (TF_BITS). */
function tfColumns(a: AnalyzedPassage): string[] {
  const cols: string[][] = TF_BITS.map(() => []);
  for (const [t, v] of weightedCounts(a)) for (let i = 0; i < TF_BITS.length; i++) if (v & TF_BITS[i]!) cols[i]!.push(t);
  return cols.map((c) => c.join(" "));
}

export const COLLECTIONS_SQLITE_SCHEMA = `${COMMON_SCHEMA}
${DF_TABLE} WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS quarry_collection_chunks (
  rowid INTEGER PRIMARY KEY, account TEXT NOT NULL, collection TEXT NOT NULL, doc_id TEXT NOT NULL,
  heading TEXT, body TEXT NOT NULL, length REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS quarry_collection_chunks_doc ON quarry_collection_chunks (account, collection, doc_id);
CREATE INDEX IF NOT EXISTS quarry_collection_chunks_len ON quarry_collection_chunks (account, collection, rowid, length);
CREATE VIRTUAL TABLE IF NOT EXISTS quarry_collection_tf USING fts5(${TF_BITS.map((v) => `"${v}"`).join(", ")}, content = '', contentless_delete = 1, detail = column, tokenize = 'unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE IF NOT EXISTS quarry_collection_tf_postings USING fts5vocab(quarry_collection_tf, instance);
`;

/**
 * What each collection holds, kept on its row as its documents come and go: `held_documents`, and
 * `held_bytes` (the sum of its documents' `bytes`), so a put checks the plan's caps from the account's
 * collection rows rather than reading every one of its documents (at 1,000,000 documents that read took
 * 75 to 260 ms inside the write transaction). Added to tables made before, and counted from their
 * documents, once: PostgreSQL here (the migrations run under their lock), SQLite in init.
 */
const HELD_COLUMNS = "ADD COLUMN held_documents BIGINT NOT NULL DEFAULT 0, ADD COLUMN held_bytes BIGINT NOT NULL DEFAULT 0";
const HELD_BACKFILL = `UPDATE quarry_collections SET
  held_documents = (SELECT count(*) FROM quarry_collection_docs d WHERE d.account = quarry_collections.account AND d.collection = quarry_collections.name),
  held_bytes = (SELECT coalesce(sum(bytes), 0) FROM quarry_collection_docs d WHERE d.account = quarry_collections.account AND d.collection = quarry_collections.name)`;
const HELD_PG = `DO $held$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'quarry_collections' AND column_name = 'held_bytes') THEN
    ALTER TABLE quarry_collections ${HELD_COLUMNS};
    ${HELD_BACKFILL};
  END IF;
END $held$;`;

/** Bytes of entries a postings block holds at most: a row stays under the 2 KB past which PostgreSQL would try to compress it. */
const BLOCK_BYTES = 1024;
/** How full PostgreSQL fills the blocks' pages with new rows, the rest kept for the new versions of growing blocks. */
const BLOCKS_FILLFACTOR = 75;

/**
 * PostgreSQL keeps its own postings: for each term of a collection, blocks of entries (`quarry_collection_blocks`),
 * each entry a passage's number, the term's weighted count in it and the passage's weighted length, as varints
 * with the numbers delta-coded (postings.ts: 3.2 bytes an entry at 100,000 passages of news), so a search reads
 * only its terms' blocks, and a term's passage count is the number of its entries (no table of counts). A block
 * is keyed by the number of its first entry when written, over KEY_STEP (`block`), and keeps its last one's (`last`): new
 * entries go on at the end of the term's last block, delta-coded from `last`, until it holds BLOCK_BYTES, and
 * a removal finds the blocks whose range holds its passages by key. A document's passages are numbered in a
 * row (per collection, from `quarry_collections.next_passage`), and their text is kept in one row per document
 * (`quarry_collection_texts`: the passages' headings and texts as arrays, from the number of the first), which
 * PostgreSQL compresses as one value (its default pglz: 69 % of the text at 100,000 passages of news, lz4 74 %);
 * a search reads it for the passages it returns. The blocks' pages keep free room (fillfactor) for the new
 * versions of the blocks that grow, so PostgreSQL writes them beside the old ones (HOT updates) and prunes
 * those (bench/RESULTS.md, "compact postings"). The blocks' numbers come first in the row, so `last` needs
 * no padding to its 8-byte alignment after the texts.
 *
 * Data format 2 kept a block as a bigint[] of packed entries (and an entry count `n`): that table is
 * renamed and read into this one when the server starts (upgradeBlocks).
 */
const BLOCKS_TABLE = `CREATE TABLE IF NOT EXISTS quarry_collection_blocks (
  last BIGINT NOT NULL, block INTEGER NOT NULL, account TEXT NOT NULL, collection TEXT NOT NULL, term TEXT NOT NULL,
  items BYTEA NOT NULL,
  PRIMARY KEY (account, collection, term, block)
) WITH (fillfactor = ${BLOCKS_FILLFACTOR})`;

export const COLLECTIONS_PG_SCHEMA = `${COMMON_SCHEMA}
${HELD_PG}
ALTER TABLE quarry_collections ADD COLUMN IF NOT EXISTS next_passage BIGINT NOT NULL DEFAULT 1;
CREATE TABLE IF NOT EXISTS quarry_collection_texts (
  account TEXT NOT NULL, collection TEXT NOT NULL, doc_id TEXT NOT NULL, first BIGINT NOT NULL,
  headings TEXT[] NOT NULL, bodies TEXT[] NOT NULL,
  PRIMARY KEY (account, collection, doc_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS quarry_collection_texts_first ON quarry_collection_texts (account, collection, first);
${BLOCKS_TABLE};
`;

const TF_INSERT = `INSERT INTO quarry_collection_tf (rowid, ${TF_BITS.map((v) => `"${v}"`).join(", ")}) VALUES (?${", ?".repeat(TF_BITS.length)})`;

const iso = (ms: unknown) => new Date(Number(ms)).toISOString();
const bytesOf = (d: IndexedDocument) => {
  const enc = new TextEncoder();
  return enc.encode(d.title ?? "").length + d.passages.reduce((n, p) => n + enc.encode(p.heading ?? "").length + enc.encode(p.text).length, 0);
};

/**
 * When SQLite's search scores in two passes (MaxScore): when its terms' postings number more than `postings`, the
 * first pass taking the rarest terms up to `firstPass` postings (always the rarest one). PostgreSQL's scores every
 * passage holding a term, in the process (topPg).
 */
export interface PassPlan {
  postings: number;
  firstPass: number;
}

export class SqlCollectionStore implements CollectionStore {
  constructor(
    private readonly db: SqlDriver,
    private readonly passes: PassPlan = { postings: 20_000, firstPass: 2_000 },
  ) {}

  /** SQLite makes its tables here; PostgreSQL's come with the other migrations, under their lock. Both carry older collections over. */
  async init(): Promise<void> {
    if (this.db.dialect === "sqlite") await this.db.exec(COLLECTIONS_SQLITE_SCHEMA);
    await this.upgrade();
    if (this.db.dialect === "sqlite") await this.heldColumnsSqlite();
  }

  /** SQLite's part of HELD_PG: one column at a time, in a write transaction, so two processes starting at once add them once. */
  private async heldColumnsSqlite(): Promise<void> {
    const has = async (q: Query) => (await q("SELECT name FROM pragma_table_info('quarry_collections') WHERE name = 'held_bytes'")).length > 0;
    if (await has((sql, params) => this.db.query(sql, params))) return;
    await this.db.tx(async (q) => {
      if (await has(q)) return;
      for (const column of HELD_COLUMNS.split(", ")) await q(`ALTER TABLE quarry_collections ${column}`);
      await q(HELD_BACKFILL);
    });
  }

  /**
   * Collections made before the stores ranked alike kept their passages in `quarry_collection_passages`
   * (and, on SQLite, FTS5's `quarry_collection_fts` with the porter tokenizer): their passages are read
   * again into the tables of this version, with their statistics, and the old tables dropped, once.
   */
  private async upgrade(): Promise<void> {
    const sqlite = this.db.dialect === "sqlite";
    if (sqlite) await this.db.tx((q) => this.upgradeTerms(q));
    await this.db.tx(async (q) => {
      if (!sqlite) {
        await q("SELECT pg_advisory_xact_lock(730130)");
        await this.upgradeBlocks(q);
        await this.upgradeChunks(q);
      }
      const old = sqlite
        ? await q("SELECT name FROM sqlite_master WHERE name = 'quarry_collection_fts'")
        : await q("SELECT 1 AS name WHERE to_regclass('quarry_collection_passages') IS NOT NULL");
      if (!old.length) return;
      const rows = sqlite
        ? await q("SELECT p.account, p.collection, p.doc_id, f.title, f.heading, f.body FROM quarry_collection_passages p JOIN quarry_collection_fts f ON f.rowid = p.rowid ORDER BY p.rowid")
        : await q("SELECT account, collection, doc_id, title, heading, body FROM quarry_collection_passages ORDER BY id");
      const stats = new Map<string, { account: string; name: string; stats: Stats }>();
      const text = (v: unknown) => (v === null || v === "" ? null : String(v));
      const passages = new Map<string, NewPassage[]>();
      for (const r of rows) {
        const key = JSON.stringify([r.account, r.collection]);
        let c = stats.get(key);
        if (!c) stats.set(key, (c = { account: String(r.account), name: String(r.collection), stats: new Stats() }));
        const a = analyzePassage(text(r.title), text(r.heading), String(r.body));
        c.stats.count(a, 1);
        if (!passages.has(key)) passages.set(key, []);
        passages.get(key)!.push({ docId: String(r.doc_id), heading: text(r.heading), text: String(r.body), a });
      }
      for (const [key, c] of stats) {
        await this.insertPassages(q, c.account, c.name, passages.get(key)!);
        await this.saveStats(q, c.account, c.name, c.stats);
      }
      if (sqlite) await q("DROP TABLE quarry_collection_fts");
      await q("DROP TABLE quarry_collection_passages");
    });
  }

  /**
   * PostgreSQL collections of data format 2 kept each postings block as a bigint[] of packed entries with its
   * entry count `n` (and numbered a term's blocks 0, 1, 2 …): that table is renamed, this version's made, and
   * every term's entries read over in order (5,000 old blocks a statement) and written as this version's blocks
   * (postings.ts); the old table is then dropped. The ranking is the same: the entries are.
   */
  private async upgradeBlocks(q: Query): Promise<void> {
    const old = await q(
      "SELECT 1 AS x FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'quarry_collection_blocks' AND column_name = 'n'",
    );
    if (!old.length) return;
    await q("ALTER TABLE quarry_collection_blocks RENAME TO quarry_collection_blocks_format2");
    await q("ALTER TABLE quarry_collection_blocks_format2 RENAME CONSTRAINT quarry_collection_blocks_pkey TO quarry_collection_blocks_format2_pkey");
    await q(BLOCKS_TABLE);
    let at: { account: string; collection: string; term: string } | null = null;
    let entries: Entry[] = [];
    let pending: { term: string; block: number; last: number; items: Uint8Array }[] = [];
    const flush = async (all: boolean) => {
      if (at && entries.length) {
        entries.sort((x, y) => x.id - y.id);
        for (const b of cutBlocks(entries, null, BLOCK_BYTES).blocks) pending.push({ term: at.term, ...b });
        entries = [];
      }
      if (pending.length && (all || pending.length >= 5000) && at) {
        await this.writeBlocks(q, at.account, at.collection, pending, "replace");
        pending = [];
      }
    };
    for (let after: unknown[] = ["", "", "", -1]; ; ) {
      const rows = await q(
        `SELECT account, collection, term, block, array_send(items) AS items FROM quarry_collection_blocks_format2
         WHERE (account, collection, term, block) > (?, ?, ?, ?) ORDER BY account, collection, term, block LIMIT 5000`,
        after,
      );
      if (!rows.length) break;
      for (const r of rows) {
        const account = String(r.account), collection = String(r.collection), term = String(r.term);
        if (!at || at.account !== account || at.collection !== collection || at.term !== term) {
          // A new collection's blocks are written under its own name: what is pending of the last one goes first.
          await flush(!at || at.account !== account || at.collection !== collection);
          at = { account, collection, term };
        }
        for (const e of format2Entries(r.items as Uint8Array)) entries.push(e);
      }
      const l = rows[rows.length - 1]!;
      after = [l.account, l.collection, l.term, l.block];
    }
    await flush(true);
    await q("DROP TABLE quarry_collection_blocks_format2");
  }

  /**
   * PostgreSQL collections of the version that kept a row per passage in `quarry_collection_chunks` (with a
   * `tsvector` of its terms under a GIN index) and the terms' passage counts in `quarry_collection_df`: each
   * collection's passages are read again, 200 documents at a time, into texts and postings blocks (the
   * statistics stay as they are); the old tables are then dropped.
   */
  private async upgradeChunks(q: Query): Promise<void> {
    if (!(await q("SELECT 1 AS x WHERE to_regclass('quarry_collection_chunks') IS NOT NULL")).length) return;
    for (const c of await q("SELECT account, name FROM quarry_collections ORDER BY account, name")) {
      const account = String(c.account), name = String(c.name);
      for (let after = ""; ; ) {
        const docs = await q("SELECT DISTINCT doc_id FROM quarry_collection_chunks WHERE account = ? AND collection = ? AND doc_id > ? ORDER BY doc_id LIMIT 200", [account, name, after]);
        if (!docs.length) break;
        const rows = await q(
          `SELECT c.doc_id, c.heading, c.body, d.title FROM quarry_collection_chunks c
           LEFT JOIN quarry_collection_docs d ON d.account = c.account AND d.collection = c.collection AND d.id = c.doc_id
           WHERE c.account = ? AND c.collection = ? AND c.doc_id = ANY(?::text[]) ORDER BY c.doc_id, c.id`,
          [account, name, docs.map((d) => String(d.doc_id))],
        );
        const text = (v: unknown) => (v === null || v === "" ? null : String(v));
        await this.insertPassages(q, account, name, rows.map((r) => ({ docId: String(r.doc_id), heading: text(r.heading), text: String(r.body), a: analyzePassage(text(r.title), text(r.heading), String(r.body)) })));
        after = String(docs[docs.length - 1]!.doc_id);
      }
    }
    await q("DROP TABLE quarry_collection_chunks");
    await q("DROP TABLE IF EXISTS quarry_collection_df");
  }

  /**
   * SQLite collections of the previous version indexed each passage's terms as they occur (FTS5
   * `quarry_collection_terms`, a column per field, every position): their passages are read again into the
   * index of weighted counts (quarry_collection_tf), 1,000 at a time, and the old index dropped, once.
   */
  private async upgradeTerms(q: Query): Promise<void> {
    if (!(await q("SELECT name FROM sqlite_master WHERE name = 'quarry_collection_terms'")).length) return;
    for (let after = -1; ; ) {
      const rows = await q(
        `SELECT c.rowid, d.title, c.heading, c.body FROM quarry_collection_chunks c
         LEFT JOIN quarry_collection_docs d ON d.account = c.account AND d.collection = c.collection AND d.id = c.doc_id
         WHERE c.rowid > ? ORDER BY c.rowid LIMIT 1000`,
        [after],
      );
      if (!rows.length) break;
      for (const r of rows) {
        const a = analyzePassage(r.title === null ? null : String(r.title), r.heading === null ? null : String(r.heading), String(r.body));
        await q(TF_INSERT, [r.rowid, ...tfColumns(a)]);
      }
      after = Number(rows[rows.length - 1]!.rowid);
    }
    await q("DROP TABLE IF EXISTS quarry_collection_postings");
    await q("DROP TABLE quarry_collection_terms");
  }

  async create(account: string, name: string, description: string | null, now: number): Promise<CollectionInfo | null> {
    const rows = await this.db.query(
      "INSERT INTO quarry_collections (account, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (account, name) DO NOTHING RETURNING name",
      [account, name, description, now, now],
    );
    return rows.length ? this.get(account, name) : null;
  }

  private async infos(account: string, name: string | null): Promise<CollectionInfo[]> {
    const rows = await this.db.query(
      `SELECT c.name, c.description, c.created_at, c.updated_at,
              count(d.id) AS documents, coalesce(sum(d.passages), 0) AS passages, coalesce(sum(d.bytes), 0) AS bytes
       FROM quarry_collections c LEFT JOIN quarry_collection_docs d ON d.account = c.account AND d.collection = c.name
       WHERE c.account = ?${name === null ? "" : " AND c.name = ?"}
       GROUP BY c.name, c.description, c.created_at, c.updated_at ORDER BY c.name`,
      name === null ? [account] : [account, name],
    );
    return rows.map((r) => ({
      name: String(r.name),
      description: r.description === null ? null : String(r.description),
      documents: Number(r.documents),
      passages: Number(r.passages),
      bytes: Number(r.bytes),
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }));
  }

  list(account: string): Promise<CollectionInfo[]> {
    return this.infos(account, null);
  }

  async get(account: string, name: string): Promise<CollectionInfo | null> {
    return (await this.infos(account, name))[0] ?? null;
  }

  async remove(account: string, name: string): Promise<boolean> {
    return this.db.tx(async (q) => {
      const gone = await q("DELETE FROM quarry_collections WHERE account = ? AND name = ? RETURNING name", [account, name]);
      if (!gone.length) return false;
      if (this.db.dialect === "sqlite") {
        await q("DELETE FROM quarry_collection_tf WHERE rowid IN (SELECT rowid FROM quarry_collection_chunks WHERE account = ? AND collection = ?)", [account, name]);
      }
      const tables = this.db.dialect === "sqlite"
        ? ["quarry_collection_chunks", "quarry_collection_df", "quarry_collection_stats", "quarry_collection_docs"]
        : ["quarry_collection_texts", "quarry_collection_blocks", "quarry_collection_stats", "quarry_collection_docs"];
      for (const table of tables) {
        await q(`DELETE FROM ${table} WHERE account = ? AND collection = ?`, [account, name]);
      }
      return true;
    });
  }

  /**
   * Removes one document's passages, and takes them out of the collection's statistics (their terms read
   * again from their text, as they were read when added).
   */
  private async dropPassages(q: Query, account: string, name: string, docId: string, title: string | null, stats: Stats): Promise<void> {
    if (this.db.dialect === "pg") {
      const [t] = await q("DELETE FROM quarry_collection_texts WHERE account = ? AND collection = ? AND doc_id = ? RETURNING first, headings, bodies", [account, name, docId]);
      if (!t) return;
      const headings = t.headings as (string | null)[], bodies = t.bodies as string[];
      const terms = new Set<string>();
      bodies.forEach((body, i) => {
        const a = analyzePassage(title, headings[i] ?? null, body);
        stats.count(a, -1);
        for (const term of a.distinct) terms.add(term);
      });
      // The passages' entries leave their terms' blocks: only the blocks whose range of numbers holds them are
      // read (for each term, the last block keyed at or below the first passage, and those keyed below the end),
      // decoded, and written again without them, or deleted when nothing is left.
      // A block's key is its first number when written, over KEY_STEP: every entry of a block lies below the next
      // block's first number, which is at or above its key's base, so the blocks keyed below first's key, but the
      // last of them, hold none of the passages, and those keyed above end − 1's neither.
      const first = Number(t.first), end = first + bodies.length, low = Math.floor(first / KEY_STEP), high = Math.floor((end - 1) / KEY_STEP);
      const touched = await q(
        `SELECT x.term, x.block, x.items FROM unnest(?::text[]) AS u(term)
         CROSS JOIN LATERAL (SELECT b.term, b.block, b.last, b.items FROM quarry_collection_blocks b
                             WHERE b.account = ? AND b.collection = ? AND b.term = u.term AND b.block <= ?
                               AND b.block >= coalesce((SELECT max(y.block) FROM quarry_collection_blocks y
                                                        WHERE y.account = ? AND y.collection = ? AND y.term = u.term AND y.block < ?), ?)) x
         WHERE x.last >= ?`,
        [[...terms], account, name, high, account, name, low, low, first],
      );
      const rewritten: { term: string; block: number; last: number; items: Uint8Array }[] = [], emptied: { term: string; block: number }[] = [];
      for (const r of touched) {
        const block = Number(r.block), kept = decodeBlock(r.items as Uint8Array, block).filter((e) => e.id < first || e.id >= end);
        if (kept.length) rewritten.push({ term: String(r.term), block, last: kept[kept.length - 1]!.id, items: encodeBlock(kept, block) });
        else emptied.push({ term: String(r.term), block });
      }
      await this.writeBlocks(q, account, name, rewritten, "replace");
      if (emptied.length) {
        await q(
          "DELETE FROM quarry_collection_blocks b USING unnest(?::text[], ?::int[]) AS u(term, block) WHERE b.account = ? AND b.collection = ? AND b.term = u.term AND b.block = u.block",
          [emptied.map((e) => e.term), emptied.map((e) => String(e.block)), account, name],
        );
      }
      return;
    }
    const rows = await q("SELECT rowid AS id, heading, body, length FROM quarry_collection_chunks WHERE account = ? AND collection = ? AND doc_id = ?", [account, name, docId]);
    for (const r of rows) {
      const a = analyzePassage(title, r.heading === null ? null : String(r.heading), String(r.body));
      stats.count(a, -1);
    }
    await q("DELETE FROM quarry_collection_tf WHERE rowid IN (SELECT rowid FROM quarry_collection_chunks WHERE account = ? AND collection = ? AND doc_id = ?)", [account, name, docId]);
    await q("DELETE FROM quarry_collection_chunks WHERE account = ? AND collection = ? AND doc_id = ?", [account, name, docId]);
  }

  async put(account: string, name: string, docs: IndexedDocument[], opts: IndexCaps & { now: number }): Promise<PutResult> {
    const maxBytes = opts.maxBytes ?? null;
    return this.db.tx(async (q): Promise<PutResult> => {
      // A capped account's puts take turns across all its collections (capLock); then the collection's row
      // is the lock: one account's additions to it take turns (SQLite: the write transaction).
      if (opts.maxDocuments !== null || maxBytes !== null) await this.capLock(q, account);
      const [c] = await q(`SELECT name FROM quarry_collections WHERE account = ? AND name = ?${this.db.dialect === "pg" ? " FOR UPDATE" : ""}`, [account, name]);
      if (!c) return { ok: false, reason: "no_collection" };
      const existing = new Map<string, { hash: string; title: string | null; bytes: number }>();
      for (let i = 0; i < docs.length; i += 500) {
        const ids = docs.slice(i, i + 500).map((d) => d.id);
        const rows = await q(`SELECT id, hash, title, bytes FROM quarry_collection_docs WHERE account = ? AND collection = ? AND id IN (${ids.map(() => "?").join(", ")})`, [account, name, ...ids]);
        for (const r of rows) existing.set(String(r.id), { hash: String(r.hash), title: r.title === null ? null : String(r.title), bytes: Number(r.bytes) });
      }
      const sizes = new Map(docs.map((d) => [d, bytesOf(d)]));
      const refused = await this.overCap(q, account, docs, existing, sizes, opts.maxDocuments, maxBytes);
      if (refused) return refused;
      const outcome = { added: [] as string[], replaced: [] as string[], unchanged: [] as string[] };
      let heldBytes = 0;
      const stats = new Stats();
      const passages: NewPassage[] = [];
      for (const d of docs) {
        const was = existing.get(d.id);
        if (was?.hash === d.hash) {
          outcome.unchanged.push(d.id);
          continue;
        }
        heldBytes += sizes.get(d)! - (was?.bytes ?? 0);
        if (was !== undefined) {
          await this.dropPassages(q, account, name, d.id, was.title, stats);
          await q("DELETE FROM quarry_collection_docs WHERE account = ? AND collection = ? AND id = ?", [account, name, d.id]);
          outcome.replaced.push(d.id);
        } else {
          outcome.added.push(d.id);
        }
        existing.set(d.id, { hash: d.hash, title: d.title, bytes: sizes.get(d)! });
        await q(
          "INSERT INTO quarry_collection_docs (account, collection, id, url, title, hash, passages, bytes, metadata, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          [account, name, d.id, d.url, d.title, d.hash, d.passages.length, sizes.get(d)!, d.metadata ? JSON.stringify(d.metadata) : null, opts.now],
        );
        for (const p of d.passages) {
          const a = analyzePassage(d.title, p.heading, p.text);
          stats.count(a, 1);
          passages.push({ docId: d.id, heading: p.heading, text: p.text, a });
        }
      }
      await this.insertPassages(q, account, name, passages);
      await this.saveStats(q, account, name, stats);
      if (outcome.added.length || outcome.replaced.length) await q("UPDATE quarry_collections SET updated_at = ? WHERE account = ? AND name = ?", [opts.now, account, name]);
      await this.addHeld(q, account, name, outcome.added.length, heldBytes);
      return { ok: true, outcome };
    });
  }

  /**
   * PostgreSQL: one account's capped puts take turns on an advisory lock of its name, whichever of its
   * collections they fill, so two of them never both count the room one of them takes (the collection's
   * row lock alone would let puts into two collections pass a cap together). SQLite's write
   * transaction already serializes them.
   */
  private async capLock(q: Query, account: string): Promise<void> {
    if (this.db.dialect === "pg") await q("SELECT pg_advisory_xact_lock(hashtext(?))", [`quarry_collections:${account}`]);
  }

  /**
   * The plan's caps on what the account's collections hold, checked before anything is written: the
   * documents this put adds (new ids), and the bytes it adds (a new document's, or a changed one's new
   * size less its old; an unchanged one adds nothing). A put that adds nothing of a capped kind is not
   * refused, so an account over a lowered cap can still replace documents with smaller ones.
   */
  private async overCap(
    q: Query, account: string, docs: IndexedDocument[], existing: ReadonlyMap<string, { hash: string; bytes: number }>, sizes: ReadonlyMap<IndexedDocument, number>,
    maxDocuments: number | null, maxBytes: number | null,
  ): Promise<Extract<PutResult, { reason: "index_full" }> | null> {
    if (maxDocuments === null && maxBytes === null) return null;
    const was = new Map([...existing].map(([id, e]) => [id, e]));
    let addDocs = 0, addBytes = 0;
    for (const d of docs) {
      const before = was.get(d.id);
      if (before?.hash === d.hash) continue;
      if (!before) addDocs++;
      addBytes += sizes.get(d)! - (before?.bytes ?? 0);
      was.set(d.id, { hash: d.hash, bytes: sizes.get(d)! });
    }
    const countDocs = maxDocuments !== null && addDocs > 0;
    const countBytes = maxBytes !== null && addBytes > 0;
    if (!countDocs && !countBytes) return null;
    const held = await this.accountHolds(q, account);
    if (countDocs && held.documents + addDocs > maxDocuments!) return { ok: false, reason: "index_full", cap: "index_documents", held: held.documents, adding: addDocs, limit: maxDocuments! };
    if (countBytes && held.bytes + addBytes > maxBytes!) return { ok: false, reason: "index_full", cap: "index_bytes", held: held.bytes, adding: addBytes, limit: maxBytes! };
    return null;
  }

  /** What all the account's collections hold: documents, and bytes of text as `bytes` counts them (HELD_PG). */
  private async accountHolds(q: Query, account: string): Promise<{ documents: number; bytes: number }> {
    const [r] = await q("SELECT coalesce(sum(held_documents), 0) AS n, coalesce(sum(held_bytes), 0) AS b FROM quarry_collections WHERE account = ?", [account]);
    return { documents: Number(r?.n ?? 0), bytes: Number(r?.b ?? 0) };
  }

  /** Keeps a collection's held_documents and held_bytes (HELD_PG) in step with a change to its documents, in the change's transaction. */
  private async addHeld(q: Query, account: string, name: string, documents: number, bytes: number): Promise<void> {
    if (documents === 0 && bytes === 0) return;
    await q("UPDATE quarry_collections SET held_documents = held_documents + ?, held_bytes = held_bytes + ? WHERE account = ? AND name = ?", [documents, bytes, account, name]);
  }

  /** Adds what a change did to the collection's statistics, many terms a statement. */
  private async saveStats(q: Query, account: string, name: string, stats: Stats): Promise<void> {
    if (!stats.passages && !stats.df.size) return;
    await q(
      "INSERT INTO quarry_collection_stats (account, collection, passages, length) VALUES (?, ?, ?, ?) ON CONFLICT (account, collection) DO UPDATE SET passages = quarry_collection_stats.passages + excluded.passages, length = quarry_collection_stats.length + excluded.length",
      [account, name, stats.passages, stats.length],
    );
    // PostgreSQL counts a term's passages in its postings blocks (quarry_collection_blocks.n).
    if (this.db.dialect === "pg") return;
    const changes = [...stats.df].filter(([, n]) => n !== 0);
    for (let i = 0; i < changes.length; i += 200) {
      const part = changes.slice(i, i + 200);
      await q(
        `INSERT INTO quarry_collection_df (account, collection, term, df) VALUES ${part.map(() => "(?, ?, ?, ?)").join(", ")}
         ON CONFLICT (account, collection, term) DO UPDATE SET df = quarry_collection_df.df + excluded.df`,
        part.flatMap(([t, n]) => [account, name, t, n]),
      );
    }
    if (changes.some(([, n]) => n < 0)) await q("DELETE FROM quarry_collection_df WHERE account = ? AND collection = ? AND df <= 0", [account, name]);
  }

  /** SQLite: a statement per passage (no round trips to save); PostgreSQL: 100 passages a statement. */
  private async insertPassages(q: Query, account: string, name: string, passages: NewPassage[]): Promise<void> {
    if (this.db.dialect === "sqlite") {
      for (const p of passages) {
        const [row] = await q("INSERT INTO quarry_collection_chunks (account, collection, doc_id, heading, body, length) VALUES (?, ?, ?, ?, ?, ?) RETURNING rowid", [account, name, p.docId, p.heading, p.text, p.a.length]);
        await q(TF_INSERT, [row!.rowid, ...tfColumns(p.a)]);
      }
      return;
    }
    // PostgreSQL: the passages are numbered in a row per document from the collection's counter (its row is
    // locked by the transaction), each document's text goes in one row, and the terms' postings in one statement.
    const docs = new Map<string, NewPassage[]>();
    for (const p of passages) {
      if (!docs.has(p.docId)) docs.set(p.docId, []);
      docs.get(p.docId)!.push(p);
    }
    const groups = [...docs];
    for (let i = 0; i < groups.length; i += 200) {
      const part = groups.slice(i, i + 200);
      const count = part.reduce((n, [, ps]) => n + ps.length, 0);
      const [c] = await q("UPDATE quarry_collections SET next_passage = next_passage + ? WHERE account = ? AND name = ? RETURNING next_passage - ? AS first", [count, account, name, count]);
      if (!c) return;
      let next = BigInt(String(c.first));
      const firsts: string[] = [], numbered: { id: bigint; a: AnalyzedPassage }[] = [];
      for (const [, ps] of part) {
        firsts.push(next.toString());
        for (const p of ps) numbered.push({ id: next++, a: p.a });
      }
      // Arrays of arrays must be rectangular: each document's headings and texts go as JSON.
      await q(
        `INSERT INTO quarry_collection_texts (account, collection, doc_id, first, headings, bodies)
         SELECT ?, ?, u.doc_id, u.first, ARRAY(SELECT jsonb_array_elements(u.h) ->> 0), ARRAY(SELECT jsonb_array_elements_text(u.b))
         FROM unnest(?::text[], ?::bigint[], ?::jsonb[], ?::jsonb[]) AS u(doc_id, first, h, b)`,
        [account, name, part.map(([d]) => d), firsts, part.map(([, ps]) => JSON.stringify(ps.map((p) => [p.heading]))), part.map(([, ps]) => JSON.stringify(ps.map((p) => p.text)))],
      );
      await this.addPostings(q, account, name, numbered);
    }
  }

  /**
   * Appends passages (numbers above every one already in the collection) to their terms' postings: each term's
   * last block is read (its key, last number and size), its new entries go on at its end, delta-coded from its
   * last number, while it holds fewer than BLOCK_BYTES, and the rest into new blocks; one statement writes them
   * all. The collection's row, locked by the caller's transaction, keeps other writers off the blocks between.
   */
  private async addPostings(q: Query, account: string, name: string, passages: { id: bigint; a: AnalyzedPassage }[]): Promise<void> {
    const entries = new Map<string, Entry[]>();
    for (const p of passages) {
      const id = Number(p.id);
      for (const [t, f] of weightedCounts(p.a)) {
        let list = entries.get(t);
        if (!list) entries.set(t, (list = []));
        list.push({ id, tf: f, length: p.a.length });
      }
    }
    if (!entries.size) return;
    const terms = [...entries.keys()];
    const tails = new Map<string, { block: number; last: number; bytes: number }>();
    for (const r of await q(
      `SELECT u.term, l.block, l.last, octet_length(l.items) AS bytes FROM unnest(?::text[]) AS u(term)
       CROSS JOIN LATERAL (SELECT b.block, b.last, b.items FROM quarry_collection_blocks b
                           WHERE b.account = ? AND b.collection = ? AND b.term = u.term ORDER BY b.block DESC LIMIT 1) l`,
      [terms, account, name],
    )) tails.set(String(r.term), { block: Number(r.block), last: Number(r.last), bytes: Number(r.bytes) });
    const rows: { term: string; block: number; last: number; items: Uint8Array }[] = [];
    for (const [term, list] of entries) {
      list.sort((x, y) => x.id - y.id);
      const { appended, blocks } = cutBlocks(list, tails.get(term) ?? null, BLOCK_BYTES);
      if (appended) rows.push({ term, ...appended });
      for (const b of blocks) rows.push({ term, ...b });
    }
    await this.writeBlocks(q, account, name, rows, "append");
  }

  /**
   * Writes blocks, many a statement: "append" adds each row's bytes at the end of the block of its key (when it
   * is there: a new block's row is inserted), "replace" sets them (blocks a removal rewrote).
   */
  private async writeBlocks(q: Query, account: string, name: string, rows: { term: string; block: number; last: number; items: Uint8Array }[], how: "append" | "replace"): Promise<void> {
    for (let i = 0; i < rows.length; i += 5000) {
      const part = rows.slice(i, i + 5000);
      await q(
        `INSERT INTO quarry_collection_blocks AS b (block, last, account, collection, term, items)
         SELECT u.block, u.last, ?, ?, u.term, u.items FROM unnest(?::text[], ?::int[], ?::bigint[], ?::bytea[]) AS u(term, block, last, items)
         ON CONFLICT (account, collection, term, block) DO UPDATE SET last = excluded.last, items = ${how === "append" ? "b.items || excluded.items" : "excluded.items"}`,
        [account, name, part.map((r) => r.term), part.map((r) => String(r.block)), part.map((r) => String(r.last)), part.map((r) => r.items)],
      );
    }
  }

  async documents(account: string, name: string, skip: number, limit: number): Promise<DocumentInfo[]> {
    const rows = await this.db.query(
      "SELECT id, url, title, passages, bytes, metadata, updated_at FROM quarry_collection_docs WHERE account = ? AND collection = ? ORDER BY id LIMIT ? OFFSET ?",
      [account, name, limit, skip],
    );
    return rows.map((r: Row) => ({
      id: String(r.id),
      url: r.url === null ? null : String(r.url),
      title: r.title === null ? null : String(r.title),
      passages: Number(r.passages),
      bytes: Number(r.bytes),
      metadata: r.metadata === null ? null : (JSON.parse(String(r.metadata)) as Record<string, unknown>),
      updated_at: iso(r.updated_at),
    }));
  }

  async document(account: string, name: string, id: string): Promise<(DocumentInfo & { text: PassageText[] }) | null> {
    const [r] = await this.db.query("SELECT id, url, title, passages, bytes, metadata, updated_at FROM quarry_collection_docs WHERE account = ? AND collection = ? AND id = ?", [account, name, id]);
    if (!r) return null;
    // SQLite keeps a row per passage; PostgreSQL one row per document with its passages as arrays (quarry_collection_texts).
    const chunks = this.db.dialect === "sqlite"
      ? await this.db.query("SELECT heading, body FROM quarry_collection_chunks WHERE account = ? AND collection = ? AND doc_id = ? ORDER BY rowid", [account, name, id])
      : await this.db.query(
          "SELECT u.heading, u.body FROM quarry_collection_texts t CROSS JOIN LATERAL unnest(t.headings, t.bodies) WITH ORDINALITY AS u(heading, body, n) WHERE t.account = ? AND t.collection = ? AND t.doc_id = ? ORDER BY u.n",
          [account, name, id],
        );
    return {
      id: String(r.id), url: r.url === null ? null : String(r.url), title: r.title === null ? null : String(r.title), passages: Number(r.passages), bytes: Number(r.bytes),
      metadata: r.metadata === null ? null : (JSON.parse(String(r.metadata)) as Record<string, unknown>), updated_at: iso(r.updated_at),
      text: chunks.map((c) => ({ heading: c.heading === null || c.heading === "" ? null : String(c.heading), text: String(c.body) })),
    };
  }

  async removeDocument(account: string, name: string, id: string): Promise<boolean> {
    return this.db.tx(async (q) => {
      // PostgreSQL: the collection's row is the lock, as in put, so a removal and an addition never rewrite the same blocks at once.
      if (this.db.dialect === "pg") await q("SELECT name FROM quarry_collections WHERE account = ? AND name = ? FOR UPDATE", [account, name]);
      const gone = await q("DELETE FROM quarry_collection_docs WHERE account = ? AND collection = ? AND id = ? RETURNING title, bytes", [account, name, id]);
      if (!gone.length) return false;
      await this.addHeld(q, account, name, -1, -Number(gone[0]!.bytes));
      const stats = new Stats();
      await this.dropPassages(q, account, name, id, gone[0]!.title === null ? null : String(gone[0]!.title), stats);
      await this.saveStats(q, account, name, stats);
      await q("UPDATE quarry_collections SET updated_at = ? WHERE account = ? AND name = ?", [Date.now(), account, name]);
      return true;
    });
  }

  async search(account: string, name: string, terms: string[], limit: number): Promise<PassageHit[]> {
    const stems = [...new Set(terms.flatMap((t) => (t.match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => stem(w.toLowerCase()))))];
    if (!stems.length) return [];
    const [st] = await this.db.query("SELECT passages, length FROM quarry_collection_stats WHERE account = ? AND collection = ?", [account, name]);
    const n = Number(st?.passages ?? 0);
    if (!n) return [];
    const avg = Number(st!.length) / n || 1;
    if (this.db.dialect === "pg") return this.hits(account, name, await this.topPg(account, name, stems, n, avg, limit));
    const dfs = await this.db.query(`SELECT term, df FROM quarry_collection_df WHERE account = ? AND collection = ? AND term IN (${stems.map(() => "?").join(", ")})`, [account, name, ...stems]);
    const q = dfs.map((r) => ({ term: String(r.term), df: Number(r.df), idf: idf(n, Number(r.df)) })).filter((t) => t.idf > 0).sort((x, y) => y.idf - x.idf);
    if (!q.length) return [];
    const { k1, b } = BM25;
    // Σ over the query's terms of idf × tf·(k1+1) / (tf + k1·(1 − b + b·length/avg)), tf and length weighted by field.
    const bm25 = (tf: string, length: string) => `${tf} * ${k1 + 1} / (${tf} + ${k1} * (${1 - b} + ${b} * ${length} / ?))`;
    // Passages first, their documents' URL and title after: one join across both tables let
    // PostgreSQL's planner, before statistics exist, loop over every document for every passage.
    // Every passage that holds a term is scored with all the query's terms, and the passages to score are
    // as few as the answer allows (MaxScore): first those holding one of the rarest terms; a term adds at
    // most idf × (k1+1), so once the limit-th score is known, passages holding only terms whose bounds sum
    // below it cannot reach the answer, and the others are scored only if such terms are left. The answer
    // is the same as scoring every passage that holds any term.
    const scored = (match: typeof q): Promise<Row[]> => {
      {
        // FTS5's postings of each term (fts5vocab); a term that does not choose passages is read only for those chosen.
        const chosen = new Set(match.map((t) => t.term));
        const all = match.length === q.length;
        // Scored from the postings and the narrow index of the passages' lengths alone (quarry_collection_chunks_len,
        // which holds a passage's collection and length by its rowid): the passages' rows, with their text, are
        // read only for the `limit` best, not for every passage that holds a term.
        // One row per passage with each term's f in its own column (one GROUP BY, and one length lookup a
        // passage rather than one a passage and term, then no second grouping).
        return this.db.query(
          `WITH cand(doc) AS (${all ? "SELECT 0" : match.map(() => "SELECT doc FROM quarry_collection_tf_postings WHERE term = ?").join(" UNION ")}),
           tf AS (SELECT doc, ${q.map((_, i) => `sum(CASE t WHEN ${i} THEN col END) AS f${i}`).join(", ")}
                  FROM (${q.map((t, i) => `SELECT doc, ${i} AS t, col FROM quarry_collection_tf_postings WHERE term = ?${chosen.has(t.term) ? "" : " AND doc IN cand"}`).join(" UNION ALL ")})
                  GROUP BY doc),
           top AS (SELECT tf.doc AS id, ${q.map((_, i) => `coalesce(? * ${bm25(`tf.f${i}`, "l.length")}, 0)`).join(" + ")} AS score
                   FROM tf CROSS JOIN quarry_collection_chunks AS l INDEXED BY quarry_collection_chunks_len
                   ON l.account = ? AND l.collection = ? AND l.rowid = tf.doc
                   ORDER BY score DESC, tf.doc LIMIT ?)
           SELECT top.id, c.doc_id, c.heading, c.body, top.score FROM top CROSS JOIN quarry_collection_chunks c ON c.rowid = top.id
           ORDER BY top.score DESC, top.id`,
          [...(all ? [] : match.map((t) => t.term)), ...q.map((t) => t.term), ...q.flatMap((t) => [t.idf, avg]), account, name, limit],
        );
      }
    };
    const bound = (t: (typeof q)[number]) => t.idf * (k1 + 1);
    // Two passes pay only when the terms' passages are many: up to 20,000 postings (PassPlan) all are scored at once.
    const budget = this.passes.firstPass;
    let first = q.reduce((a, t) => a + t.df, 0) <= this.passes.postings ? q.length : 1;
    for (let seen = q[0]!.df; first < q.length && seen + q[first]!.df <= budget; first++) seen += q[first]!.df;
    let rows = await scored(q.slice(0, first));
    const threshold = rows.length >= limit ? Number(rows[limit - 1]!.score) : 0;
    let needed = q.length, below = 0;
    while (needed > 0 && below + bound(q[needed - 1]!) < threshold) below += bound(q[--needed]!);
    if (needed > first) rows = await scored(q.slice(0, needed));
    return this.hits(account, name, rows);
  }

  /**
   * PostgreSQL: the query's terms' postings blocks are read whole (their bytes: 3.2 bytes an entry at 100,000
   * passages), decoded (postings.ts) and scored here: each term's entries come in order of passage number (blocks in order, each sorted), so
   * the terms' lists are merged passage by passage, each passage's score summed over the terms in the order
   * SQLite sums them (rarest first), and the `limit` best kept in a heap. Then the texts of those alone.
   * Grouping 40,000 passages' scores in SQL took 30 to 38 ms of a 62 ms query; the merge takes a few.
   */
  private async topPg(account: string, name: string, stems: string[], n: number, avg: number, limit: number): Promise<Row[]> {
    const blocks = await this.db.query(
      "SELECT term, block, items FROM quarry_collection_blocks WHERE account = ? AND collection = ? AND term = ANY(?::text[]) ORDER BY term, block",
      [account, name, stems],
    );
    const lists = new Map<string, { block: number; items: Uint8Array }[]>();
    for (const r of blocks) {
      const term = String(r.term);
      if (!lists.has(term)) lists.set(term, []);
      lists.get(term)!.push({ block: Number(r.block), items: r.items as Uint8Array });
    }
    const terms = [...lists].map(([term, parts]) => postingsOf(parts)).map((p) => ({ ...p, idf: idf(n, p.ids.length) }))
      .filter((t) => t.idf > 0 && t.ids.length > 0).sort((x, y) => y.idf - x.idf);
    if (!terms.length) return [];
    const { k1, b } = BM25;
    const top = new TopK(limit);
    const at = terms.map(() => 0);
    for (;;) {
      let id = Infinity;
      for (let i = 0; i < terms.length; i++) if (at[i]! < terms[i]!.ids.length && terms[i]!.ids[at[i]!]! < id) id = terms[i]!.ids[at[i]!]!;
      if (id === Infinity) break;
      let score = 0;
      for (let i = 0; i < terms.length; i++) {
        const t = terms[i]!, j = at[i]!;
        if (j < t.ids.length && t.ids[j] === id) {
          const tf = t.tfs[j]!;
          // As SQLite's SQL computes it, operation for operation, so both stores give the same scores to the last bit.
          score += t.idf * tf * (k1 + 1) / (tf + k1 * ((1 - b) + b * t.lengths[j]! / avg));
          at[i] = j + 1;
        }
      }
      top.offer(id, score);
    }
    const best = top.sorted();
    if (!best.length) return [];
    return this.db.query(
      `SELECT s.id, t.doc_id, t.headings[s.id - t.first + 1] AS heading, t.bodies[s.id - t.first + 1] AS body, s.score
       FROM unnest(?::bigint[], ?::float8[]) WITH ORDINALITY AS s(id, score, rank)
       CROSS JOIN LATERAL (SELECT x.doc_id, x.first, x.headings, x.bodies FROM quarry_collection_texts x
                           WHERE x.account = ? AND x.collection = ? AND x.first <= s.id ORDER BY x.first DESC LIMIT 1) t
       ORDER BY s.rank`,
      [best.map((h) => h.id), best.map((h) => h.score), account, name],
    );
  }

  /** The passages' documents' URLs and titles, read for the passages found (rows of id, doc_id, heading, body, score). */
  private async hits(account: string, name: string, rows: Row[]): Promise<PassageHit[]> {
    const docs = new Map<string, Row>();
    const ids = [...new Set(rows.map((r) => String(r.doc_id)))];
    for (let i = 0; i < ids.length; i += 500) {
      const part = ids.slice(i, i + 500);
      const found = await this.db.query(`SELECT id, url, title FROM quarry_collection_docs WHERE account = ? AND collection = ? AND id IN (${part.map(() => "?").join(", ")})`, [account, name, ...part]);
      for (const d of found) docs.set(String(d.id), d);
    }
    return rows.flatMap((r) => {
      const d = docs.get(String(r.doc_id));
      if (!d) return [];
      return [{
        docId: String(r.doc_id),
        url: d.url === null ? null : String(d.url),
        title: d.title === null ? null : String(d.title),
        heading: r.heading === null || r.heading === "" ? null : String(r.heading),
        text: String(r.body),
        score: Number(r.score),
      }];
    });
  }
}

/** A term's postings from its blocks, in order: passage numbers, weighted counts and lengths (postings.ts). */
function postingsOf(parts: { block: number; items: Uint8Array }[]): { ids: Float64Array; tfs: Uint16Array; lengths: Uint16Array } {
  const most = parts.reduce((n, p) => n + (p.items.length >> 1), 0);
  const ids = new Float64Array(most), tfs = new Uint16Array(most), lengths = new Uint16Array(most);
  let k = 0;
  for (const p of parts) k = decodeInto(p.items, p.block, ids, tfs, lengths, k);
  return { ids: ids.subarray(0, k), tfs: tfs.subarray(0, k), lengths: lengths.subarray(0, k) };
}

/** The `limit` best (score, passage number) offered, by score down and number up: a heap whose root is the worst kept. */
class TopK {
  private readonly ids: number[] = [];
  private readonly scores: number[] = [];
  constructor(private readonly limit: number) {}
  /** Whether a is worse than b (lower score, or the same score and a higher number). */
  private worse(a: number, b: number): boolean {
    const sa = this.scores[a]!, sb = this.scores[b]!;
    return sa < sb || (sa === sb && this.ids[a]! > this.ids[b]!);
  }
  private swap(a: number, b: number): void {
    [this.ids[a], this.ids[b]] = [this.ids[b]!, this.ids[a]!];
    [this.scores[a], this.scores[b]] = [this.scores[b]!, this.scores[a]!];
  }
  offer(id: number, score: number): void {
    if (this.limit <= 0) return;
    if (this.ids.length < this.limit) {
      this.ids.push(id);
      this.scores.push(score);
      for (let i = this.ids.length - 1; i > 0; ) {
        const parent = (i - 1) >> 1;
        if (!this.worse(i, parent)) break;
        this.swap(i, parent);
        i = parent;
      }
      return;
    }
    const root = this.scores[0]!;
    if (score < root || (score === root && id > this.ids[0]!)) return;
    this.ids[0] = id;
    this.scores[0] = score;
    for (let i = 0; ; ) {
      const l = 2 * i + 1, r = l + 1;
      let w = i;
      if (l < this.ids.length && this.worse(l, w)) w = l;
      if (r < this.ids.length && this.worse(r, w)) w = r;
      if (w === i) break;
      this.swap(i, w);
      i = w;
    }
  }
  /** The kept, best first. */
  sorted(): { id: number; score: number }[] {
    return this.ids.map((id, i) => ({ id, score: this.scores[i]! })).sort((a, b) => b.score - a.score || a.id - b.id);
  }
}

interface NewPassage {
  docId: string;
  heading: string | null;
  text: string;
  a: AnalyzedPassage;
}

/** What one change does to a collection's statistics: passages and weighted length added (or taken), and each term's passage count. */
class Stats {
  passages = 0;
  length = 0;
  readonly df = new Map<string, number>();
  count(a: AnalyzedPassage, sign: 1 | -1): void {
    this.passages += sign;
    this.length += sign * a.length;
    for (const t of a.distinct) this.df.set(t, (this.df.get(t) ?? 0) + sign);
  }
}

/**
 * Memory mode (tests, `quarry demo`): the same store on an SQLite database in memory, opened on
 * first use, so collections work there too and keep nothing.
 */
export function inMemoryCollections(open: () => Promise<SqlDriver>): CollectionStore {
  let store: Promise<SqlCollectionStore> | null = null;
  const ready = () =>
    (store ??= open().then(async (db) => {
      const s = new SqlCollectionStore(db);
      await s.init();
      return s;
    }));
  return new Proxy({} as CollectionStore, {
    get: (_t, method: keyof CollectionStore) => async (...args: unknown[]) => {
      const s = await ready();
      return (s[method] as (...a: unknown[]) => unknown).apply(s, args);
    },
  });
}
