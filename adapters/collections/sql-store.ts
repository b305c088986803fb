/**
 * The collection store on SQL (core/ports/collections.ts): SQLite's FTS5 (porter stemming over
 * unicode61, bm25 with the title and heading weighing more than the text) and PostgreSQL's full-text
 * search (the english configuration, a GIN index, ts_rank over weighted title, heading and text).
 * The passages live beside the documents in the same database, so backups and upgrades carry them.
 */
import type { CollectionInfo, CollectionStore, DocumentInfo, IndexedDocument, PassageHit, PutResult } from "../../core/ports/collections.ts";
import type { Query, Row, SqlDriver } from "../jobs/sql-drivers.ts";

/** Tables both dialects share (SQLite's FTS5 table is made apart; PostgreSQL's passages carry their tsvector). */
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
`;

export const COLLECTIONS_SQLITE_SCHEMA = `${COMMON_SCHEMA}
CREATE TABLE IF NOT EXISTS quarry_collection_passages (
  rowid INTEGER PRIMARY KEY, account TEXT NOT NULL, collection TEXT NOT NULL, doc_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS quarry_collection_passages_doc ON quarry_collection_passages (account, collection, doc_id);
CREATE VIRTUAL TABLE IF NOT EXISTS quarry_collection_fts USING fts5(title, heading, body, tokenize = 'porter unicode61 remove_diacritics 2');
`;

export const COLLECTIONS_PG_SCHEMA = `${COMMON_SCHEMA}
CREATE TABLE IF NOT EXISTS quarry_collection_passages (
  id BIGSERIAL PRIMARY KEY, account TEXT NOT NULL, collection TEXT NOT NULL, doc_id TEXT NOT NULL,
  title TEXT, heading TEXT, body TEXT NOT NULL, tsv tsvector NOT NULL
);
CREATE INDEX IF NOT EXISTS quarry_collection_passages_doc ON quarry_collection_passages (account, collection, doc_id);
CREATE INDEX IF NOT EXISTS quarry_collection_passages_tsv ON quarry_collection_passages USING GIN (tsv);
`;

/** Title, heading and text: how much each weighs in a passage's score (bm25 column weights; ts_rank's A, B, C). */
const WEIGHTS = { title: 3, heading: 2, body: 1 };

const iso = (ms: unknown) => new Date(Number(ms)).toISOString();
const bytesOf = (d: IndexedDocument) => {
  const enc = new TextEncoder();
  return enc.encode(d.title ?? "").length + d.passages.reduce((n, p) => n + enc.encode(p.heading ?? "").length + enc.encode(p.text).length, 0);
};

export class SqlCollectionStore implements CollectionStore {
  constructor(private readonly db: SqlDriver) {}

  /** SQLite makes its tables here; PostgreSQL's come with the other migrations, under their lock. */
  async init(): Promise<void> {
    if (this.db.dialect === "sqlite") await this.db.exec(COLLECTIONS_SQLITE_SCHEMA);
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
      await this.dropPassages(q, account, name, null);
      await q("DELETE FROM quarry_collection_docs WHERE account = ? AND collection = ?", [account, name]);
      return true;
    });
  }

  /** Removes the passages of one document (or of the whole collection: `docId` null). */
  private async dropPassages(q: Query, account: string, name: string, docId: string | null): Promise<void> {
    const where = `account = ? AND collection = ?${docId === null ? "" : " AND doc_id = ?"}`;
    const params = docId === null ? [account, name] : [account, name, docId];
    if (this.db.dialect === "sqlite") {
      await q(`DELETE FROM quarry_collection_fts WHERE rowid IN (SELECT rowid FROM quarry_collection_passages WHERE ${where})`, params);
    }
    await q(`DELETE FROM quarry_collection_passages WHERE ${where}`, params);
  }

  async put(account: string, name: string, docs: IndexedDocument[], opts: { maxDocuments: number | null; now: number }): Promise<PutResult> {
    return this.db.tx(async (q): Promise<PutResult> => {
      // The collection's row is the lock: one account's additions to it take turns (SQLite: the write transaction).
      const [c] = await q(`SELECT name FROM quarry_collections WHERE account = ? AND name = ?${this.db.dialect === "pg" ? " FOR UPDATE" : ""}`, [account, name]);
      if (!c) return { ok: false, reason: "no_collection" };
      const existing = new Map<string, string>();
      for (let i = 0; i < docs.length; i += 500) {
        const ids = docs.slice(i, i + 500).map((d) => d.id);
        const rows = await q(`SELECT id, hash FROM quarry_collection_docs WHERE account = ? AND collection = ? AND id IN (${ids.map(() => "?").join(", ")})`, [account, name, ...ids]);
        for (const r of rows) existing.set(String(r.id), String(r.hash));
      }
      const fresh = docs.filter((d) => !existing.has(d.id));
      if (opts.maxDocuments !== null && fresh.length) {
        const [n] = await q("SELECT count(*) AS n FROM quarry_collection_docs WHERE account = ?", [account]);
        const held = Number(n!.n);
        if (held + fresh.length > opts.maxDocuments) return { ok: false, reason: "index_full", held, limit: opts.maxDocuments };
      }
      const outcome = { added: [] as string[], replaced: [] as string[], unchanged: [] as string[] };
      for (const d of docs) {
        const was = existing.get(d.id);
        if (was === d.hash) {
          outcome.unchanged.push(d.id);
          continue;
        }
        if (was !== undefined) {
          await this.dropPassages(q, account, name, d.id);
          await q("DELETE FROM quarry_collection_docs WHERE account = ? AND collection = ? AND id = ?", [account, name, d.id]);
          outcome.replaced.push(d.id);
        } else {
          outcome.added.push(d.id);
        }
        await q(
          "INSERT INTO quarry_collection_docs (account, collection, id, url, title, hash, passages, bytes, metadata, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          [account, name, d.id, d.url, d.title, d.hash, d.passages.length, bytesOf(d), d.metadata ? JSON.stringify(d.metadata) : null, opts.now],
        );
        for (const p of d.passages) await this.insertPassage(q, account, name, d, p.heading, p.text);
      }
      if (outcome.added.length || outcome.replaced.length) await q("UPDATE quarry_collections SET updated_at = ? WHERE account = ? AND name = ?", [opts.now, account, name]);
      return { ok: true, outcome };
    });
  }

  private async insertPassage(q: Query, account: string, name: string, d: IndexedDocument, heading: string | null, text: string): Promise<void> {
    if (this.db.dialect === "sqlite") {
      const [row] = await q("INSERT INTO quarry_collection_passages (account, collection, doc_id) VALUES (?, ?, ?) RETURNING rowid", [account, name, d.id]);
      await q("INSERT INTO quarry_collection_fts (rowid, title, heading, body) VALUES (?, ?, ?, ?)", [row!.rowid, d.title ?? "", heading ?? "", text]);
      return;
    }
    await q(
      `INSERT INTO quarry_collection_passages (account, collection, doc_id, title, heading, body, tsv) VALUES (?, ?, ?, ?, ?, ?,
         setweight(to_tsvector('english', coalesce(?, '')), 'A') || setweight(to_tsvector('english', coalesce(?, '')), 'B') || setweight(to_tsvector('english', ?), 'C'))`,
      [account, name, d.id, d.title, heading, text, d.title, heading, text],
    );
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

  async removeDocument(account: string, name: string, id: string): Promise<boolean> {
    return this.db.tx(async (q) => {
      const gone = await q("DELETE FROM quarry_collection_docs WHERE account = ? AND collection = ? AND id = ? RETURNING id", [account, name, id]);
      if (!gone.length) return false;
      await this.dropPassages(q, account, name, id);
      await q("UPDATE quarry_collections SET updated_at = ? WHERE account = ? AND name = ?", [Date.now(), account, name]);
      return true;
    });
  }

  async search(account: string, name: string, terms: string[], limit: number): Promise<PassageHit[]> {
    const words = terms.map((t) => t.replace(/[^\p{L}\p{N}]/gu, "")).filter(Boolean);
    if (!words.length) return [];
    // Passages first, their documents' URL and title after: one join across both tables let
    // PostgreSQL's planner, before statistics exist, loop over every document for every passage.
    const rows =
      this.db.dialect === "sqlite"
        ? await this.db.query(
            `SELECT p.doc_id, f.heading, f.body, -bm25(quarry_collection_fts, ${WEIGHTS.title}, ${WEIGHTS.heading}, ${WEIGHTS.body}) AS score
             FROM quarry_collection_fts f JOIN quarry_collection_passages p ON p.rowid = f.rowid
             WHERE quarry_collection_fts MATCH ? AND p.account = ? AND p.collection = ?
             ORDER BY score DESC LIMIT ?`,
            [words.map((w) => `"${w}"`).join(" OR "), account, name, limit],
          )
        : await this.db.query(
            `SELECT p.doc_id, p.heading, p.body, ts_rank('{0.1, ${WEIGHTS.body / 3}, ${WEIGHTS.heading / 3}, ${WEIGHTS.title / 3}}', p.tsv, q, 1) AS score
             FROM quarry_collection_passages p, to_tsquery('english', ?) q
             WHERE p.account = ? AND p.collection = ? AND p.tsv @@ q
             ORDER BY score DESC LIMIT ?`,
            [words.join(" | "), account, name, limit],
          );
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
