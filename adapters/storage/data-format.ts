/**
 * The data format: which layout of tables and records a database holds, kept in the database
 * itself (one row of quarry_format, on SQLite and PostgreSQL alike) with the Quarry version
 * that first wrote it. A Quarry opens data of its own format or an older one (and marks it as
 * its own); data of a newer format was written by a newer Quarry whose records it could misread
 * or overwrite, so it refuses to start on it, with one line naming both versions, before it
 * changes anything. Versions before this marker existed wrote format 1 without saying so.
 * Format 2: collections keep what each holds on its row (held_documents, held_bytes, which an older
 * version's writes would leave stale), and PostgreSQL's collections moved from a tsvector per passage to
 * postings blocks and one text row per document (an older version would look for tables no longer there).
 * Format 3: PostgreSQL's postings blocks hold their entries as varint bytes keyed by their first passage number
 * (adapters/collections/postings.ts), which format 2's bigint[] reader would misread; format 2's blocks are
 * converted when the server starts. SQLite's data is unchanged from format 2.
 *
 * Raise DATA_FORMAT with any change an older version would misread (a column or record it would
 * drop or misinterpret, a meaning that changed), never for additions it can ignore.
 */
import type { SyncSqlite } from "./sqlite-counters.ts";

export const DATA_FORMAT = 3;

export const FORMAT_TABLE = "CREATE TABLE IF NOT EXISTS quarry_format (id INTEGER PRIMARY KEY, format INTEGER NOT NULL, version TEXT NOT NULL)";

export class DataFormatError extends Error {}

export interface FormatRow {
  format: number;
  version: string;
}

/** Throws DataFormatError when `row` is newer than this version can read; true when it must be (re)written. */
export function checkFormat(row: FormatRow | undefined, version: string): boolean {
  if (!row) return true;
  const format = Number(row.format);
  if (format > DATA_FORMAT) {
    throw new DataFormatError(
      `this data was written by Quarry ${row.version} (data format ${format}); Quarry ${version} reads data format ${DATA_FORMAT} and older, ` +
        `so it does not start on it and leaves it unchanged: run Quarry ${row.version} or newer, or restore a backup made before the upgrade`,
    );
  }
  return format < DATA_FORMAT;
}

/** SQLite: checked and marked before anything else touches the file. */
export function sqliteFormat(db: SyncSqlite, version: string): void {
  db.exec(FORMAT_TABLE);
  const row = db.prepare("SELECT format, version FROM quarry_format WHERE id = 1").get() as FormatRow | undefined;
  if (checkFormat(row, version)) {
    db.prepare("INSERT INTO quarry_format (id, format, version) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET format = excluded.format, version = excluded.version").run(DATA_FORMAT, version);
  }
}
