/**
 * Opens the embedded SQLite database through db0 with the runtime's own driver
 * (better-sqlite3 on Node, bun:sqlite on Bun, node:sqlite on Deno) and prepares it:
 * WAL for concurrent readers, a busy timeout so the CLI and the server wait for each other.
 */
import { join } from "node:path";
import { createDatabase, type Connector, type Database } from "db0";
import type { SyncSqlite } from "../storage/sqlite-counters.ts";
import { makeDataDir } from "./data-dir.ts";

export type SqliteConnectorFactory = (opts: { path: string }) => Connector;

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
