/**
 * ReadHistory (core/ports/reads.ts) in memory and on SQL (SQLite and PostgreSQL through the job
 * store's driver): one row per account, tag and URL, replaced by each read that can be compared.
 */
import type { PageRead, ReadHistory } from "../../core/ports/reads.ts";
import type { Row, SqlDriver } from "./sql-drivers.ts";

/** Part of the PostgreSQL migrations (pg-schema.ts) and of SQLite's start (init). */
export const READS_SCHEMA = `
CREATE TABLE IF NOT EXISTS quarry_reads (
  account TEXT NOT NULL, tag TEXT NOT NULL, url TEXT NOT NULL, read_at BIGINT NOT NULL, status_code INTEGER NOT NULL,
  gone INTEGER NOT NULL, digest TEXT NOT NULL, markdown TEXT NOT NULL,
  PRIMARY KEY (account, tag, url)
);
`;

const key = (account: string, tag: string, url: string) => JSON.stringify([account, tag, url]);

export class MemoryReadHistory implements ReadHistory {
  private readonly rows = new Map<string, PageRead>();
  async last(account: string, tag: string, url: string): Promise<PageRead | null> {
    const r = this.rows.get(key(account, tag, url));
    return r ? { ...r } : null;
  }
  async exchange(account: string, tag: string, url: string, read: PageRead): Promise<PageRead | null> {
    const k = key(account, tag, url);
    const before = this.rows.get(k) ?? null;
    this.rows.set(k, { ...read });
    return before;
  }
  async forgetTag(account: string, tag: string): Promise<number> {
    let n = 0;
    for (const k of [...this.rows.keys()]) {
      const [a, t] = JSON.parse(k) as [string, string];
      if (a === account && t === tag) (this.rows.delete(k), n++);
    }
    return n;
  }
  async forgetOthers(account: string, tag: string, before: number, keep: ReadonlySet<string>): Promise<number> {
    let n = 0;
    for (const [k, r] of [...this.rows]) {
      const [a, t, url] = JSON.parse(k) as [string, string, string];
      if (a === account && t === tag && r.readAt < before && !keep.has(url)) (this.rows.delete(k), n++);
    }
    return n;
  }
  async tags(prefix: string): Promise<Array<{ account: string; tag: string }>> {
    const seen = new Map<string, { account: string; tag: string }>();
    for (const k of this.rows.keys()) {
      const [account, tag] = JSON.parse(k) as [string, string];
      if (tag.startsWith(prefix)) seen.set(JSON.stringify([account, tag]), { account, tag });
    }
    return [...seen.values()];
  }
}

function toRead(r: Row): PageRead {
  return { readAt: Number(r.read_at), statusCode: Number(r.status_code), gone: Number(r.gone) === 1, digest: String(r.digest), markdown: String(r.markdown) };
}

export class SqlReadHistory implements ReadHistory {
  constructor(private readonly db: SqlDriver) {}

  /** SQLite creates its table here; PostgreSQL gets it with the other migrations. */
  async init(): Promise<void> {
    if (this.db.dialect === "sqlite") await this.db.exec(READS_SCHEMA);
  }

  async last(account: string, tag: string, url: string): Promise<PageRead | null> {
    const [r] = await this.db.query("SELECT read_at, status_code, gone, digest, markdown FROM quarry_reads WHERE account = ? AND tag = ? AND url = ?", [account, tag, url]);
    return r ? toRead(r) : null;
  }

  async exchange(account: string, tag: string, url: string, read: PageRead): Promise<PageRead | null> {
    return this.db.tx(async (q) => {
      // The row locked (PostgreSQL) or the database (SQLite's write transaction): reads of one URL take turns.
      const [r] = await q(
        `SELECT read_at, status_code, gone, digest, markdown FROM quarry_reads WHERE account = ? AND tag = ? AND url = ?${this.db.dialect === "pg" ? " FOR UPDATE" : ""}`,
        [account, tag, url],
      );
      await q(
        `INSERT INTO quarry_reads (account, tag, url, read_at, status_code, gone, digest, markdown) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (account, tag, url) DO UPDATE SET read_at = excluded.read_at, status_code = excluded.status_code, gone = excluded.gone, digest = excluded.digest, markdown = excluded.markdown`,
        [account, tag, url, read.readAt, read.statusCode, read.gone ? 1 : 0, read.digest, read.markdown],
      );
      return r ? toRead(r) : null;
    });
  }

  async forgetTag(account: string, tag: string): Promise<number> {
    return (await this.db.query("DELETE FROM quarry_reads WHERE account = ? AND tag = ? RETURNING url", [account, tag])).length;
  }

  /** The candidates read first (their URLs only, by the primary key's prefix), then deleted 500 a statement, each still only if not read since. */
  async forgetOthers(account: string, tag: string, before: number, keep: ReadonlySet<string>): Promise<number> {
    const stale = (await this.db.query("SELECT url FROM quarry_reads WHERE account = ? AND tag = ? AND read_at < ?", [account, tag, before])).map((r) => String(r.url)).filter((u) => !keep.has(u));
    let n = 0;
    for (let i = 0; i < stale.length; i += 500) {
      const part = stale.slice(i, i + 500);
      n += (await this.db.query(`DELETE FROM quarry_reads WHERE account = ? AND tag = ? AND read_at < ? AND url IN (${part.map(() => "?").join(", ")}) RETURNING url`, [account, tag, before, ...part])).length;
    }
    return n;
  }

  async tags(prefix: string): Promise<Array<{ account: string; tag: string }>> {
    // The prefix compared as a substring, not with LIKE: a tag may hold % or _.
    const rows = await this.db.query("SELECT DISTINCT account, tag FROM quarry_reads WHERE substr(tag, 1, ?) = ?", [prefix.length, prefix]);
    return rows.map((r) => ({ account: String(r.account), tag: String(r.tag) }));
  }
}
