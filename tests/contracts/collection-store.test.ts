/** The CollectionStore contract on SQLite (FTS5) and PostgreSQL (full-text search), through the code that serves collections. */
import Database from "better-sqlite3";
import pg from "pg";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COLLECTIONS_PG_SCHEMA, SqlCollectionStore } from "../../adapters/collections/sql-store.ts";
import { pgDriver, sqliteDriver } from "../../adapters/jobs/sql-drivers.ts";
import type { SyncSqlite } from "../../adapters/storage/sqlite-counters.ts";
import { addDocuments, searchCollection, toIndexed } from "../../core/collections/service.ts";
import type { CollectionStore } from "../../core/ports/collections.ts";
import { tempDatabase } from "../helpers/pg.ts";
import { tempDir } from "../helpers/temp.ts";

const DOCS = [
  { id: "refunds", url: "https://help.example.org/billing/refunds", title: "Refunds", markdown: "# Refunds\n\nRefunds are paid back to the card you paid with, within 14 days of the request.\n\n## Exceptions\n\nGift cards are never refunded." },
  { id: "shipping", url: "https://help.example.org/orders/shipping", title: "Shipping", markdown: "# Shipping\n\nOrders ship from our warehouse in Leeds within two working days.\n\n## Tracking\n\nA tracking link is emailed when the parcel leaves." },
  { id: "accounts", url: "https://docs.example.com/accounts", title: "Accounts", markdown: "# Accounts\n\nYou can close your account from the settings page. Closing it deletes your order history." },
];

function contract(make: () => Promise<CollectionStore>) {
  let s: CollectionStore;
  beforeAll(async () => {
    s = await make();
  });

  it("creates a collection once per account and name; another account may use the name", async () => {
    expect(await s.create("acme", "help", "Help centre", 1_000)).toMatchObject({ name: "help", description: "Help centre", documents: 0, passages: 0, bytes: 0, created_at: new Date(1_000).toISOString() });
    expect(await s.create("acme", "help", null, 2_000)).toBeNull();
    expect(await s.create("other", "help", null, 2_000)).toMatchObject({ name: "help", documents: 0 });
  });

  it("adds documents, counts their passages and bytes, and finds the passage that answers, with its heading", async () => {
    const out = await addDocuments(s, "acme", "help", DOCS, null, 3_000);
    expect(out).toEqual({ added: ["refunds", "shipping", "accounts"], replaced: [], unchanged: [] });
    const info = (await s.get("acme", "help"))!;
    expect(info.documents).toBe(3);
    expect(info.passages).toBeGreaterThanOrEqual(5);
    expect(info.bytes).toBeGreaterThan(200);
    const [first] = await searchCollection(s, "acme", "help", "when are refunds paid back?", { maxResults: 5 });
    expect(first).toMatchObject({ id: "refunds", url: DOCS[0]!.url, title: "Refunds", score: 1 });
    expect(first!.passages[0]).toMatchObject({ heading: "Refunds" });
    expect(first!.passages[0]!.text).toMatch(/within 14 days/);
    // Stemming: "shipped" finds "ship"; the heading path is kept for a sub-section.
    const [ship] = await searchCollection(s, "acme", "help", "parcel tracking emailed", { maxResults: 5 });
    expect(ship).toMatchObject({ id: "shipping" });
    expect(ship!.passages[0]!.heading).toBe("Shipping › Tracking");
    expect((await searchCollection(s, "acme", "help", "orders shipped", { maxResults: 5 }))[0]).toMatchObject({ id: "shipping" });
  });

  it("never shows one account's documents to another, even under the same collection name", async () => {
    expect(await searchCollection(s, "other", "help", "refunds", { maxResults: 5 })).toEqual([]);
    expect(await s.documents("other", "help", 0, 100)).toEqual([]);
    expect(await s.removeDocument("other", "help", "refunds")).toBe(false);
    expect((await s.get("acme", "help"))!.documents).toBe(3);
  });

  it("leaves a document sent again unchanged, replaces a changed one without doubling its passages, and removes one", async () => {
    const before = (await s.get("acme", "help"))!;
    const again = await addDocuments(s, "acme", "help", [DOCS[1]!, { ...DOCS[0]!, markdown: "# Refunds\n\nRefunds now take 30 days to reach your bank." }], null, 4_000);
    expect(again).toEqual({ added: [], replaced: ["refunds"], unchanged: ["shipping"] });
    const hits = await searchCollection(s, "acme", "help", "refunds", { maxResults: 5 });
    expect(hits.filter((h) => h.id === "refunds")).toHaveLength(1);
    expect(hits[0]!.passages.map((p) => p.text).join(" ")).toMatch(/30 days/);
    expect(hits[0]!.passages.map((p) => p.text).join(" ")).not.toMatch(/14 days/);
    expect((await s.get("acme", "help"))!.passages).toBeLessThan(before.passages);
    expect(await s.removeDocument("acme", "help", "accounts")).toBe(true);
    expect(await searchCollection(s, "acme", "help", "close account settings", { maxResults: 5 })).toEqual([]);
    expect((await s.documents("acme", "help", 0, 100)).map((d) => d.id)).toEqual(["refunds", "shipping"]);
  });

  it("refuses what would pass the account's document limit, adding nothing of that request", async () => {
    await s.create("small", "a", null, 1);
    await s.create("small", "b", null, 1);
    const docs = await Promise.all(["one", "two", "three"].map((w) => toIndexed({ id: w, markdown: `Document ${w} about limits.` })));
    expect(await s.put("small", "a", docs.slice(0, 2), { maxDocuments: 3, now: 2 })).toMatchObject({ ok: true });
    // Two more in another collection of the account: the limit counts all of them.
    expect(await s.put("small", "b", docs.slice(1, 3), { maxDocuments: 3, now: 3 })).toEqual({ ok: false, reason: "index_full", held: 2, limit: 3 });
    expect((await s.get("small", "b"))!.documents).toBe(0);
    // A document already there does not count again.
    expect(await s.put("small", "a", docs.slice(0, 3), { maxDocuments: 3, now: 4 })).toMatchObject({ ok: true, outcome: { added: ["three"], unchanged: ["one", "two"] } });
    expect(await s.put("small", "missing", docs, { maxDocuments: null, now: 5 })).toEqual({ ok: false, reason: "no_collection" });
  });

  it("filters by domain and bounds the passages' tokens", async () => {
    await addDocuments(s, "acme", "help", [DOCS[2]!], null, 6_000);
    const onlyDocs = await searchCollection(s, "acme", "help", "account orders refunds", { maxResults: 5, includeDomains: ["docs.example.com"] });
    expect(onlyDocs.map((d) => d.id)).toEqual(["accounts"]);
    const notDocs = await searchCollection(s, "acme", "help", "account orders refunds", { maxResults: 5, excludeDomains: ["example.com"] });
    expect(notDocs.map((d) => d.id).sort()).toEqual(["refunds", "shipping"]);
    const all = await searchCollection(s, "acme", "help", "refunds shipping tracking warehouse parcel", { maxResults: 5 });
    expect(all.find((d) => d.id === "shipping")!.passages.length).toBe(2);
    // Past max_tokens only each document's best passage is kept.
    const bounded = await searchCollection(s, "acme", "help", "refunds shipping tracking warehouse parcel", { maxResults: 5, maxTokens: 1 });
    expect(bounded.map((d) => d.passages.length)).toEqual(bounded.map(() => 1));
  });

  it("deletes a collection with everything in it", async () => {
    expect(await s.remove("acme", "help")).toBe(true);
    expect(await s.get("acme", "help")).toBeNull();
    expect(await s.remove("acme", "help")).toBe(false);
    await s.create("acme", "help", null, 7_000);
    expect(await searchCollection(s, "acme", "help", "refunds", { maxResults: 5 })).toEqual([]);
    expect(await s.get("other", "help")).not.toBeNull();
  });
}

describe("SqlCollectionStore on SQLite (FTS5)", () => {
  const db = new Database(join(tempDir("quarry-coll-"), "c.db"));
  afterAll(() => db.close());
  contract(async () => {
    const s = new SqlCollectionStore(sqliteDriver(db as unknown as SyncSqlite));
    await s.init();
    return s;
  });
});

describe("SqlCollectionStore on PostgreSQL (full-text search)", () => {
  let drop = async () => {};
  let pool: pg.Pool;
  afterAll(async () => {
    await pool?.end();
    await drop();
  });
  contract(async () => {
    const db = await tempDatabase("coll");
    drop = db.drop;
    pool = new pg.Pool({ connectionString: db.url, max: 4 });
    await pool.query(COLLECTIONS_PG_SCHEMA);
    return new SqlCollectionStore(pgDriver(pool));
  });
});
