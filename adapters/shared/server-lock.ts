/**
 * One server per SQLite file. The server holds an exclusive SQLite lock on a small side file
 * for as long as it runs; the operating system drops it when the process ends, even on
 * SIGKILL, so a crash never leaves a stale lock. The CLI does not take it and keeps using
 * quarry.db while a server runs (WAL and the busy timeout let them share the file).
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createDatabase } from "db0";
import type { SqliteConnectorFactory } from "./sqlite.ts";

export class ServerLockedError extends Error {}

interface Holder {
  pid: number;
  url?: string;
}

export interface ServerLock {
  /** Records where this server listens, so a second one can name it. */
  listening(url: string): void;
  release(): Promise<void>;
}

interface LockDb {
  exec(sql: string): void;
  close(): void;
}

export async function lockServer(dataDir: string, connector: SqliteConnectorFactory): Promise<ServerLock> {
  const lockPath = join(dataDir, "quarry.db.server-lock");
  const infoPath = join(dataDir, "quarry.db.server.json");
  const db = (await createDatabase(connector({ path: lockPath })).getInstance()) as unknown as LockDb;
  try {
    db.exec("PRAGMA busy_timeout = 0");
    // In exclusive locking mode the lock taken by the first write is kept until the connection closes.
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("CREATE TABLE IF NOT EXISTS server_lock (held INTEGER)");
    db.exec("COMMIT");
  } catch (err) {
    try {
      db.close();
    } catch {
      // nothing to close
    }
    if (!/locked|busy/i.test(String((err as Error).message))) throw err;
    const holder = readHolder(infoPath);
    const who = holder ? `pid ${holder.pid}, ${holder.url ?? "starting"}` : "pid unknown";
    throw new ServerLockedError(
      `another quarry server (${who}) is using ${join(dataDir, "quarry.db")}; stop it first or set another QUARRY_DATA_DIR (the quarry CLI can use the file while that server runs)`,
    );
  }
  const write = (h: Holder) => {
    try {
      writeFileSync(infoPath, `${JSON.stringify(h)}\n`);
    } catch {
      // The note only names us in a refusal; the lock itself is what counts.
    }
  };
  write({ pid: process.pid });
  let released = false;
  return {
    listening: (url) => write({ pid: process.pid, url }),
    release: async () => {
      if (released) return;
      released = true;
      rmSync(infoPath, { force: true });
      try {
        db.close();
      } catch {
        // already closed
      }
    },
  };
}

function readHolder(path: string): Holder | null {
  try {
    const h = JSON.parse(readFileSync(path, "utf8")) as Holder;
    return typeof h.pid === "number" ? h : null;
  } catch {
    return null;
  }
}
