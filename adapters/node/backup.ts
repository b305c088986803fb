/**
 * `quarry backup FILE`: a copy of the embedded SQLite database that a server can start on, taken
 * while the server runs. SQLite's `VACUUM INTO` reads the whole database inside one read
 * transaction (WAL lets the server go on writing meanwhile), so the copy is the data as of one
 * moment, compacted, with nothing from a transaction half done; copying quarry.db with `cp` while
 * the server runs can miss what is still in its -wal file, or take a page from before a write and
 * the next from after it. The copy is then opened and checked (`PRAGMA quick_check`) before the
 * command says it is done. PostgreSQL data is backed up with pg_dump, not by this command.
 */
import { existsSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import Database from "better-sqlite3";

export interface BackupResult {
  source: string;
  file: string;
  bytes: number;
  /** The data format and the Quarry version that wrote it (null for data from before the marker). */
  format: number | null;
  written_by: string | null;
}

/** A backup that cannot be made as typed (exit 2) rather than one that failed (exit 1). */
export class BackupRefused extends Error {}

export function backupSqlite(dataDir: string, file: string): BackupResult {
  const source = resolve(dataDir, "quarry.db");
  const target = resolve(file);
  if (!existsSync(source)) throw new Error(`nothing to back up: there is no database at ${source} (QUARRY_DATA_DIR)`);
  if (target === source) throw new BackupRefused(`${file} is the database itself; name another file`);
  if (existsSync(target)) throw new BackupRefused(`${file} already exists; the backup does not overwrite a file (remove it, or name another)`);
  const dir = dirname(target);
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new BackupRefused(`${dir} is not a directory; the backup file goes in an existing one`);
  // Written under a name of its own, then renamed: a backup cut short never looks like a whole one.
  const partial = join(dir, `.${basename(target)}.partial-${process.pid}`);
  const db = new Database(source, { fileMustExist: true, timeout: 5000 });
  try {
    db.prepare("VACUUM INTO ?").run(partial);
  } catch (err) {
    rmSync(partial, { force: true });
    throw new Error(`could not write the backup to ${file}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    db.close();
  }
  const copy = new Database(partial, { readonly: true, fileMustExist: true });
  let format: { format: number; version: string } | undefined;
  try {
    const check = copy.prepare("PRAGMA quick_check").pluck().all() as string[];
    if (check.join() !== "ok") throw new Error(`the copy failed its check (${check.slice(0, 3).join("; ")}); it was removed`);
    const hasFormat = copy.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'quarry_format'").get();
    format = hasFormat ? (copy.prepare("SELECT format, version FROM quarry_format WHERE id = 1").get() as typeof format) : undefined;
  } catch (err) {
    copy.close();
    rmSync(partial, { force: true });
    throw err;
  }
  copy.close();
  renameSync(partial, target);
  return { source, file: target, bytes: statSync(target).size, format: format ? Number(format.format) : null, written_by: format?.version ?? null };
}
