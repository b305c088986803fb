/**
 * Collections (api.md §11): an account's own full-text index of documents, each split into passages
 * under their headings. The stores (SQLite FTS5, PostgreSQL full-text search) rank passages with
 * their own engines; every call names the account, and no call reaches another account's rows.
 */

export interface CollectionInfo {
  name: string;
  description: string | null;
  documents: number;
  passages: number;
  /** The text the collection holds (titles, headings and passages), in UTF-8 bytes. */
  bytes: number;
  created_at: string;
  updated_at: string;
}

/** One piece of a document, read with the heading it stands under. */
export interface PassageText {
  heading: string | null;
  text: string;
}

/** A document as it is indexed: its passages, and a hash of its content to know an unchanged one. */
export interface IndexedDocument {
  id: string;
  url: string | null;
  title: string | null;
  hash: string;
  passages: PassageText[];
  metadata: Record<string, unknown> | null;
}

export interface DocumentInfo {
  id: string;
  url: string | null;
  title: string | null;
  passages: number;
  bytes: number;
  metadata: Record<string, unknown> | null;
  updated_at: string;
}

/** What adding documents did, each by id. */
export interface PutOutcome {
  added: string[];
  replaced: string[];
  unchanged: string[];
}

export type PutResult =
  | { ok: true; outcome: PutOutcome }
  | { ok: false; reason: "no_collection" }
  /**
   * Adding would take the account's documents (`cap: "index_documents"`) or the bytes of text its
   * collections hold (`cap: "index_bytes"`, as `bytes` counts them) past `limit`; nothing was added.
   * `held` is what they hold now, `adding` what this request would add (replaced documents count the
   * difference).
   */
  | { ok: false; reason: "index_full"; cap: IndexCap; held: number; adding: number; limit: number };

/** The plan limits on what an account's collections hold (core/limits/plans.ts). */
export type IndexCap = "index_documents" | "index_bytes";

/** The account's caps a put must stay within: null (or absent) is no cap. */
export interface IndexCaps {
  maxDocuments: number | null;
  /** The text bytes all the account's collections may hold (as CollectionInfo.bytes counts them). */
  maxBytes?: number | null;
}

/** A passage that matched a search, with its store's score (higher is better) and its document. */
export interface PassageHit {
  docId: string;
  url: string | null;
  title: string | null;
  heading: string | null;
  text: string;
  score: number;
}

export interface CollectionStore {
  /** null when the account already has a collection of that name. */
  create(account: string, name: string, description: string | null, now: number): Promise<CollectionInfo | null>;
  list(account: string): Promise<CollectionInfo[]>;
  get(account: string, name: string): Promise<CollectionInfo | null>;
  /** Removes the collection and everything in it; false when there was none. */
  remove(account: string, name: string): Promise<boolean>;
  /**
   * Adds documents in one transaction: a document whose id is there already is replaced, unless its
   * hash is the same (then it is left as it is). `maxDocuments` caps the account's documents in all
   * collections, `maxBytes` the bytes of text they hold (null or absent: no cap); past either nothing
   * is added. A put that adds neither documents nor bytes (unchanged, or replaced by smaller ones) is
   * never refused. Puts of one account that could pass a cap take turns, so together they never do.
   */
  put(account: string, name: string, docs: IndexedDocument[], opts: IndexCaps & { now: number }): Promise<PutResult>;
  documents(account: string, name: string, skip: number, limit: number): Promise<DocumentInfo[]>;
  /** One document with its passages in their order (what a citation of it points to); null when the collection has none of that id. */
  document(account: string, name: string, id: string): Promise<(DocumentInfo & { text: PassageText[] }) | null>;
  removeDocument(account: string, name: string, id: string): Promise<boolean>;
  /** The passages best matching any of `terms` (already lower-cased words, no stop words), best first. */
  search(account: string, name: string, terms: string[], limit: number): Promise<PassageHit[]>;
}
