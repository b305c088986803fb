/**
 * The collection store on SQL (core/ports/collections.ts), on SQLite and PostgreSQL alike: passages are
 * read by core/collections/analyze.ts (words, stop words out, Porter stems), and both stores rank them
 * with the same BM25F from statistics kept per collection (how many passages hold each term, how many
 * passages and how long), so a collection ranks the same on either. SQLite finds the passages holding
 * a term with FTS5 (a contentless index of the terms, read through fts5vocab), PostgreSQL with a GIN
 * index over a tsvector of the terms (weights A, B, C for title, heading and text). The passages and
 * their statistics live beside the documents in the same database, so backups and upgrades carry them.
 */
import { analyzePassage, BM25, idf, stem, type AnalyzedPassage } from "../../core/collections/analyze.ts";
import type { CollectionInfo, CollectionStore, DocumentInfo, IndexedDocument, PassageHit, PutResult } from "../../core/ports/collections.ts";
import type { Query, Row, SqlDriver } from "../jobs/sql-drivers.ts";

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
 * occurrences in a passage, as PostgreSQL's tsvector keeps (tsvectorOf), so f < 1024: ten bits. The weights
 * are BM25.weights as the passage is indexed (a change of them reindexes, as `upgrade` does).
 */
const TF_BITS = Array.from({ length: 10 }, (_, i) => 2 ** i);
const MAX_OCCURRENCES = 255;

/** A passage's terms with their weighted count f, each in the columns of f's bits (TF_BITS). */
function tfColumns(a: AnalyzedPassage): string[] {
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
  const cols: string[][] = TF_BITS.map(() => []);
  for (const [t, v] of f) for (let i = 0; i < TF_BITS.length; i++) if (v & TF_BITS[i]!) cols[i]!.push(t);
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

export const COLLECTIONS_PG_SCHEMA = `${COMMON_SCHEMA}
${DF_TABLE};
CREATE TABLE IF NOT EXISTS quarry_collection_chunks (
  id BIGSERIAL PRIMARY KEY, account TEXT NOT NULL, collection TEXT NOT NULL, doc_id TEXT NOT NULL,
  heading TEXT, body TEXT NOT NULL, length DOUBLE PRECISION NOT NULL, tsv tsvector NOT NULL
);
CREATE INDEX IF NOT EXISTS quarry_collection_chunks_doc ON quarry_collection_chunks (account, collection, doc_id);
CREATE INDEX IF NOT EXISTS quarry_collection_chunks_tsv ON quarry_collection_chunks USING GIN (tsv);
`;

/** A passage's terms as a tsvector literal: each occurrence its own position, weighted A (title), B (heading) or C (text). */
function tsvectorOf(a: AnalyzedPassage): string {
  const at = new Map<string, string[]>();
  let pos = 0;
  const add = (terms: string[], weight: string) => {
    for (const t of terms) {
      pos = Math.min(pos + 1, 16383);
      let l = at.get(t);
      if (!l) at.set(t, (l = []));
      if (l.length < MAX_OCCURRENCES) l.push(`${pos}${weight}`);
    }
  };
  add(a.title, "A");
  add(a.heading, "B");
  add(a.body, "C");
  return [...at].map(([t, ps]) => `'${t.replace(/'/g, "''").replace(/\\/g, "\\\\")}':${ps.join(",")}`).join(" ");
}

const TF_INSERT = `INSERT INTO quarry_collection_tf (rowid, ${TF_BITS.map((v) => `"${v}"`).join(", ")}) VALUES (?${", ?".repeat(TF_BITS.length)})`;

const iso = (ms: unknown) => new Date(Number(ms)).toISOString();
const bytesOf = (d: IndexedDocument) => {
  const enc = new TextEncoder();
  return enc.encode(d.title ?? "").length + d.passages.reduce((n, p) => n + enc.encode(p.heading ?? "").length + enc.encode(p.text).length, 0);
};

/**
 * When a search scores in two passes (MaxScore): when its terms' postings number more than `postings`, the
 * first pass taking the rarest terms up to `firstPass` postings (always the rarest one).
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
      if (!sqlite) await q("SELECT pg_advisory_xact_lock(730130)");
      const old = sqlite
        ? await q("SELECT name FROM sqlite_master WHERE name = 'quarry_collection_fts'")
        : await q("SELECT 1 AS name WHERE to_regclass('quarry_collection_passages') IS NOT NULL");
      if (!old.length) return;
      const rows = sqlite
        ? await q("SELECT p.account, p.collection, p.doc_id, f.title, f.heading, f.body FROM quarry_collection_passages p JOIN quarry_collection_fts f ON f.rowid = p.rowid ORDER BY p.rowid")
        : await q("SELECT account, collection, doc_id, title, heading, body FROM quarry_collection_passages ORDER BY id");
      const stats = new Map<string, { account: string; name: string; stats: Stats }>();
      const text = (v: unknown) => (v === null || v === "" ? null : String(v));
      for (const r of rows) {
        const key = JSON.stringify([r.account, r.collection]);
        let c = stats.get(key);
        if (!c) stats.set(key, (c = { account: String(r.account), name: String(r.collection), stats: new Stats() }));
        const a = analyzePassage(text(r.title), text(r.heading), String(r.body));
        c.stats.count(a, 1);
        await this.insertPassages(q, c.account, c.name, [{ docId: String(r.doc_id), heading: text(r.heading), text: String(r.body), a }]);
      }
      for (const c of stats.values()) await this.saveStats(q, c.account, c.name, c.stats);
      if (sqlite) await q("DROP TABLE quarry_collection_fts");
      await q("DROP TABLE quarry_collection_passages");
    });
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
      for (const table of ["quarry_collection_chunks", "quarry_collection_df", "quarry_collection_stats", "quarry_collection_docs"]) {
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
    const rows = await q(`SELECT ${this.db.dialect === "sqlite" ? "rowid" : "id"} AS id, heading, body, length FROM quarry_collection_chunks WHERE account = ? AND collection = ? AND doc_id = ?`, [account, name, docId]);
    for (const r of rows) {
      const a = analyzePassage(title, r.heading === null ? null : String(r.heading), String(r.body));
      stats.count(a, -1);
    }
    if (this.db.dialect === "sqlite") {
      await q("DELETE FROM quarry_collection_tf WHERE rowid IN (SELECT rowid FROM quarry_collection_chunks WHERE account = ? AND collection = ? AND doc_id = ?)", [account, name, docId]);
    }
    await q("DELETE FROM quarry_collection_chunks WHERE account = ? AND collection = ? AND doc_id = ?", [account, name, docId]);
  }

  async put(account: string, name: string, docs: IndexedDocument[], opts: { maxDocuments: number | null; now: number }): Promise<PutResult> {
    return this.db.tx(async (q): Promise<PutResult> => {
      // The collection's row is the lock: one account's additions to it take turns (SQLite: the write transaction).
      const [c] = await q(`SELECT name FROM quarry_collections WHERE account = ? AND name = ?${this.db.dialect === "pg" ? " FOR UPDATE" : ""}`, [account, name]);
      if (!c) return { ok: false, reason: "no_collection" };
      const existing = new Map<string, { hash: string; title: string | null }>();
      for (let i = 0; i < docs.length; i += 500) {
        const ids = docs.slice(i, i + 500).map((d) => d.id);
        const rows = await q(`SELECT id, hash, title FROM quarry_collection_docs WHERE account = ? AND collection = ? AND id IN (${ids.map(() => "?").join(", ")})`, [account, name, ...ids]);
        for (const r of rows) existing.set(String(r.id), { hash: String(r.hash), title: r.title === null ? null : String(r.title) });
      }
      const fresh = docs.filter((d) => !existing.has(d.id));
      if (opts.maxDocuments !== null && fresh.length) {
        const [n] = await q("SELECT count(*) AS n FROM quarry_collection_docs WHERE account = ?", [account]);
        const held = Number(n!.n);
        if (held + fresh.length > opts.maxDocuments) return { ok: false, reason: "index_full", held, limit: opts.maxDocuments };
      }
      const outcome = { added: [] as string[], replaced: [] as string[], unchanged: [] as string[] };
      const stats = new Stats();
      const passages: NewPassage[] = [];
      for (const d of docs) {
        const was = existing.get(d.id);
        if (was?.hash === d.hash) {
          outcome.unchanged.push(d.id);
          continue;
        }
        if (was !== undefined) {
          await this.dropPassages(q, account, name, d.id, was.title, stats);
          await q("DELETE FROM quarry_collection_docs WHERE account = ? AND collection = ? AND id = ?", [account, name, d.id]);
          outcome.replaced.push(d.id);
        } else {
          outcome.added.push(d.id);
        }
        existing.set(d.id, { hash: d.hash, title: d.title });
        await q(
          "INSERT INTO quarry_collection_docs (account, collection, id, url, title, hash, passages, bytes, metadata, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          [account, name, d.id, d.url, d.title, d.hash, d.passages.length, bytesOf(d), d.metadata ? JSON.stringify(d.metadata) : null, opts.now],
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
      return { ok: true, outcome };
    });
  }

  /** Adds what a change did to the collection's statistics, many terms a statement. */
  private async saveStats(q: Query, account: string, name: string, stats: Stats): Promise<void> {
    if (!stats.passages && !stats.df.size) return;
    await q(
      "INSERT INTO quarry_collection_stats (account, collection, passages, length) VALUES (?, ?, ?, ?) ON CONFLICT (account, collection) DO UPDATE SET passages = quarry_collection_stats.passages + excluded.passages, length = quarry_collection_stats.length + excluded.length",
      [account, name, stats.passages, stats.length],
    );
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
    for (let i = 0; i < passages.length; i += 100) {
      const part = passages.slice(i, i + 100);
      await q(
        `INSERT INTO quarry_collection_chunks (account, collection, doc_id, heading, body, length, tsv) VALUES ${part.map(() => "(?, ?, ?, ?, ?, ?, ?::tsvector)").join(", ")}`,
        part.flatMap((p) => [account, name, p.docId, p.heading, p.text, p.a.length, tsvectorOf(p.a)]),
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

  async removeDocument(account: string, name: string, id: string): Promise<boolean> {
    return this.db.tx(async (q) => {
      const gone = await q("DELETE FROM quarry_collection_docs WHERE account = ? AND collection = ? AND id = ? RETURNING title", [account, name, id]);
      if (!gone.length) return false;
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
      if (this.db.dialect === "sqlite") {
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
      // PostgreSQL reads the terms of each passage it scores from the passage's tsvector.
      return this.db.query(
        `WITH q AS (SELECT * FROM unnest(?::text[], ?::float8[]) AS q(term, idf))
         SELECT c.id, c.doc_id, c.heading, c.body, sum(q.idf * ${bm25("tf.f", "c.length")}) AS score
         FROM quarry_collection_chunks c
         CROSS JOIN LATERAL (
           SELECT u.lexeme AS term, (SELECT sum(CASE w WHEN 'A' THEN ${W.title} WHEN 'B' THEN ${W.heading} ELSE ${W.body} END) FROM unnest(u.weights) w) AS f
           FROM unnest(c.tsv) u WHERE u.lexeme = ANY(?::text[])
         ) tf
         JOIN q ON q.term = tf.term
         WHERE c.account = ? AND c.collection = ? AND c.tsv @@ ?::tsquery
         GROUP BY c.id ORDER BY score DESC, c.id LIMIT ?`,
        [q.map((t) => t.term), q.map((t) => t.idf), avg, q.map((t) => t.term), account, name, match.map((t) => `'${t.term}'`).join(" | "), limit],
      );
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
