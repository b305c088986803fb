/**
 * Opens the embedded SQLite database through db0 with the runtime's own driver
 * (better-sqlite3 on Node, bun:sqlite on Bun, node:sqlite on Deno) and prepares it:
 * WAL for concurrent readers, a busy timeout so the CLI and the server wait for each other.
 */
import { join } from "node:path";
import { createDatabase, type Connector, type Database } from "db0";
import type { Clock } from "../../core/ports.ts";
import type { SqlDriver } from "../jobs/sql-drivers.ts";
import type { SyncSqlite } from "../storage/sqlite-counters.ts";
import { makeDataDir } from "./data-dir.ts";
import { statPath } from "./stat.ts";

/** `name: ":memory:"` opens a database in memory (db0's connectors read it, not `path`). */
export type SqliteConnectorFactory = (opts: { path: string; name?: string }) => Connector;

export interface SqliteHandle {
  db: Database;
  sync: SyncSqlite;
  path: string;
  close(): Promise<void>;
}

export async function openSqlite(dataDir: string, connector: SqliteConnectorFactory): Promise<SqliteHandle> {
  makeDataDir(dataDir);
  const path = join(dataDir, "quarry.db");
  const db = createDatabase(connector({ path }));
  const sync = (await db.getInstance()) as unknown as SyncSqlite & { close(): void };
  sync.exec("PRAGMA journal_mode = WAL");
  sync.exec("PRAGMA synchronous = NORMAL");
  sync.exec("PRAGMA busy_timeout = 5000");
  return {
    db,
    sync,
    path,
    close: async () => {
      try {
        sync.close();
      } catch {
        // already closed
      }
    },
  };
}

/** The file's identity on disk, or null where the system gives none. */
function inode(path: string): number | null {
  try {
    return statPath(path).ino || null;
  } catch {
    return -1; // gone
  }
}

/**
 * /health's check of the SQLite file: one row written, in its turn with the job store's
 * transactions. A file that can be read but not written (a full disk, a read-only mount, a lock
 * held elsewhere) answers every metered request with 503, so /health must not call it ok. Nor a
 * file removed or replaced under the server (the data directory deleted): writes still succeed,
 * into a file nobody will open again, and its lock no longer keeps a second server out.
 */
export function sqliteProbe(handle: SqliteHandle, sql: SqlDriver, clock: Clock): () => Promise<void> {
  const opened = inode(handle.path);
  let made = false;
  return async () => {
    if (opened !== null && inode(handle.path) !== opened) {
      throw new Error(`${handle.path} was removed or replaced while the server had it open; what it writes now is lost at the next start (restart the server)`);
    }
    if (!made) await sql.exec("CREATE TABLE IF NOT EXISTS quarry_probe (id INTEGER PRIMARY KEY, at INTEGER NOT NULL)");
    made = true;
    await sql.query("INSERT INTO quarry_probe (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at", [clock.now()]);
  };
}
