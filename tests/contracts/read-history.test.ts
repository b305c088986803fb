/**
 * The ReadHistory contract (change tracking's previous reads, issue #31) against memory, SQLite
 * and PostgreSQL (its table made by the real migration), and trackChanges on each: what `new`,
 * `same`, `changed` and `removed` mean, per account and tag, across a reopened store.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryReadHistory, SqlReadHistory } from "../../adapters/jobs/read-history.ts";
import { pgDriver, sqliteDriver } from "../../adapters/jobs/sql-drivers.ts";
import { migrate } from "../../adapters/storage/postgres.ts";
import type { SyncSqlite } from "../../adapters/storage/sqlite-counters.ts";
import { trackChanges } from "../../core/changes/track.ts";
import type { ReadHistory } from "../../core/ports/reads.ts";
import { tempDatabase } from "../helpers/pg.ts";
import { tempDir } from "../helpers/temp.ts";

const read = (at: number, markdown: string, statusCode = 200) => ({ readAt: at, statusCode, gone: statusCode === 404, digest: `d:${markdown}`, markdown });

function contract(open: () => Promise<ReadHistory>, reopen?: () => Promise<ReadHistory>) {
  it("exchange keeps the read and returns the one it replaced; last reads it", async () => {
    const h = await open();
    expect(await h.last("acme", "", "http://x.test/a")).toBeNull();
    expect(await h.exchange("acme", "", "http://x.test/a", read(1, "one"))).toBeNull();
    expect(await h.exchange("acme", "", "http://x.test/a", read(2, "two"))).toEqual(read(1, "one"));
    expect(await h.last("acme", "", "http://x.test/a")).toEqual(read(2, "two"));
  });

  it("keeps each account's and each tag's reads apart", async () => {
    const h = await open();
    await h.exchange("acme", "", "http://x.test/b", read(1, "acme's"));
    expect(await h.last("other", "", "http://x.test/b")).toBeNull();
    expect(await h.exchange("other", "", "http://x.test/b", read(2, "other's"))).toBeNull();
    expect(await h.exchange("acme", "daily", "http://x.test/b", read(3, "tagged"))).toBeNull();
    expect(await h.last("acme", "", "http://x.test/b")).toEqual(read(1, "acme's"));
    expect(await h.last("acme", "daily", "http://x.test/b")).toEqual(read(3, "tagged"));
  });

  it("forgetTag forgets one account's reads under one tag (a deleted monitor's), and nothing else", async () => {
    const h = await open();
    await h.exchange("acme", "monitor:m1", "http://x.test/f1", read(1, "one"));
    await h.exchange("acme", "monitor:m1", "http://x.test/f2", read(1, "two"));
    await h.exchange("acme", "monitor:m2", "http://x.test/f1", read(1, "kept"));
    await h.exchange("other", "monitor:m1", "http://x.test/f1", read(1, "other's"));
    expect(await h.forgetTag!("acme", "monitor:m1")).toBe(2);
    expect(await h.last("acme", "monitor:m1", "http://x.test/f1")).toBeNull();
    expect(await h.last("acme", "monitor:m1", "http://x.test/f2")).toBeNull();
    expect(await h.last("acme", "monitor:m2", "http://x.test/f1")).toEqual(read(1, "kept"));
    expect(await h.last("other", "monitor:m1", "http://x.test/f1")).toEqual(read(1, "other's"));
  });

  it("forgetOthers forgets one account's reads under one tag made before a time, but those it keeps; tags lists the tags under a prefix", async () => {
    const h = await open();
    for (const p of ["o1", "o2", "o3"]) await h.exchange("acme", "monitor:m3", `http://x.test/${p}`, read(10, p));
    await h.exchange("acme", "monitor:m3", "http://x.test/o4", read(20, "read since"));
    await h.exchange("acme", "monitor:m4", "http://x.test/o1", read(10, "another tag"));
    await h.exchange("other", "monitor:m3", "http://x.test/o1", read(10, "another account"));
    await h.exchange("acme", "monitor%", "http://x.test/o1", read(10, "not under the prefix"));
    expect(await h.forgetOthers!("acme", "monitor:m3", 20, new Set(["http://x.test/o2"]))).toBe(2);
    expect(await h.last("acme", "monitor:m3", "http://x.test/o1")).toBeNull();
    expect(await h.last("acme", "monitor:m3", "http://x.test/o3")).toBeNull();
    expect(await h.last("acme", "monitor:m3", "http://x.test/o2")).toEqual(read(10, "o2"));
    expect(await h.last("acme", "monitor:m3", "http://x.test/o4")).toEqual(read(20, "read since"));
    expect(await h.last("acme", "monitor:m4", "http://x.test/o1")).not.toBeNull();
    expect(await h.last("other", "monitor:m3", "http://x.test/o1")).not.toBeNull();
    const tags = (await h.tags!("monitor:")).map((x) => `${x.account} ${x.tag}`);
    expect(tags).toEqual(expect.arrayContaining(["acme monitor:m3", "acme monitor:m4", "other monitor:m3"]));
    expect(tags.every((x) => x.split(" ")[1]!.startsWith("monitor:"))).toBe(true);
    expect(new Set(tags).size).toBe(tags.length);
  });

  it("two reads at once each replace a different one: never both the same previous read", async () => {
    const h = await open();
    await h.exchange("acme", "", "http://x.test/c", read(1, "zero"));
    const got = await Promise.all([h.exchange("acme", "", "http://x.test/c", read(2, "a")), h.exchange("acme", "", "http://x.test/c", read(3, "b"))]);
    const previous = got.map((r) => r!.markdown).sort();
    expect(previous[1]).toBe("zero");
    expect(["a", "b"]).toContain(previous[0]);
  });

  it("trackChanges: new, same, changed with a diff, removed, still gone, back", async () => {
    const h = await open();
    const url = "http://x.test/page#frag";
    const ask = { tag: "", diff: true };
    const t0 = Date.UTC(2026, 10, 1);
    expect(await trackChanges(h, "acme", url, ask, { status: 200, markdown: "# T\n\nhello\n" }, t0)).toEqual({ change_status: "new", previous_read_at: null, visibility: "visible", tag: null, diff: null });
    expect(await trackChanges(h, "acme", url, ask, { status: 200, markdown: "# T\n\nhello\n" }, t0 + 1000)).toMatchObject({ change_status: "same", previous_read_at: new Date(t0).toISOString(), diff: "" });
    const changed = await trackChanges(h, "acme", "http://x.test/page", ask, { status: 200, markdown: "# T\n\nhello world\n" }, t0 + 2000);
    expect(changed).toMatchObject({ change_status: "changed", previous_read_at: new Date(t0 + 1000).toISOString(), visibility: "visible" });
    expect(changed!.diff).toContain("diff --git a/markdown b/markdown");
    expect(changed!.diff).toContain("-hello\n+hello world");
    // A server error says nothing of the page: not compared, not kept.
    expect(await trackChanges(h, "acme", url, ask, { status: 503, markdown: "busy" }, t0 + 3000)).toBeNull();
    expect(await trackChanges(h, "acme", url, { tag: "", diff: false }, { status: 404, markdown: null }, t0 + 4000)).toEqual({ change_status: "removed", previous_read_at: new Date(t0 + 2000).toISOString(), visibility: "hidden", tag: null });
    expect(await trackChanges(h, "acme", url, ask, { status: 410, markdown: null }, t0 + 5000)).toMatchObject({ change_status: "same", visibility: "hidden" });
    expect(await trackChanges(h, "acme", url, ask, { status: 200, markdown: "back\n" }, t0 + 6000)).toMatchObject({ change_status: "changed", visibility: "visible" });
    // Another account has never read it.
    expect(await trackChanges(h, "other", url, ask, { status: 200, markdown: "back\n" }, t0 + 7000)).toMatchObject({ change_status: "new", previous_read_at: null });
  });

  if (reopen) {
    it("a reopened store still has the reads (durable)", async () => {
      const h = await open();
      await h.exchange("acme", "keep", "http://x.test/durable", read(42, "kept"));
      const again = await reopen();
      expect(await again.last("acme", "keep", "http://x.test/durable")).toEqual(read(42, "kept"));
    });
  }
}

describe("MemoryReadHistory", () => {
  const h = new MemoryReadHistory();
  contract(async () => h);
});

describe("SqlReadHistory on SQLite", () => {
  const file = join(tempDir("quarry-reads-"), "reads.db");
  const dbs: Database.Database[] = [];
  afterAll(() => dbs.forEach((d) => d.close()));
  const openOne = async () => {
    const db = new Database(file);
    dbs.push(db);
    const h = new SqlReadHistory(sqliteDriver(db as unknown as SyncSqlite));
    await h.init();
    return h;
  };
  let first: SqlReadHistory | null = null;
  contract(async () => (first ??= await openOne()), openOne);
});

describe("SqlReadHistory on PostgreSQL (table from the migration)", () => {
  let pool: pg.Pool | null = null;
  let drop: (() => Promise<void>) | null = null;
  afterAll(async () => {
    await pool?.end();
    await drop?.();
  });
  const openOne = async () => {
    if (!pool) {
      const t = await tempDatabase("reads");
      drop = t.drop;
      pool = new pg.Pool({ connectionString: t.url, max: 3 });
      await migrate(pool);
    }
    return new SqlReadHistory(pgDriver(pool));
  };
  contract(openOne, openOne);
});
