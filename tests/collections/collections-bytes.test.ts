/**
 * The plan's `index_bytes` end to end, in process on SQLite and on PostgreSQL: the bytes of text an
 * account's collections hold (as their `bytes` in GET /v1/collections count them) are capped across
 * all its collections, whichever way they are filled. Past it, the documents route and scrape are a
 * 403 `index_full` naming the limit with nothing added; a crawl's page is a failed page `index_full`
 * with `index_limit: "index_bytes"`, and the crawl goes on. A replaced document counts its difference,
 * and puts at once never pass the cap together.
 */
import { rmSync } from "node:fs";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp, jsonCalls, type Json } from "../helpers/app.ts";
import { tempDatabase } from "../helpers/pg.ts";
import { tempDir } from "../helpers/temp.ts";
import { startDocsSite, type DocsPages } from "./docs-site.ts";

/** A paragraph of about `words` words, different on each page. */
const prose = (topic: string, words: number) => Array.from({ length: words }, (_, i) => (i % 9 === 0 ? topic : ["the", "gateway", "stores", "each", "request", "in", "its", "log", "file"][i % 9])).join(" ");
const PAGES: DocsPages = {
  "/": { title: "Manual", body: `<p>${prose("welcome", 60)}</p><ul><li><a href="/a">A</a></li><li><a href="/b">B</a></li><li><a href="/c">C</a></li><li><a href="/d">D</a></li></ul>` },
  "/a": { title: "Alpha", body: `<p>${prose("alpha", 90)}</p>` },
  "/b": { title: "Bravo", body: `<p>${prose("bravo", 90)}</p>` },
  "/c": { title: "Charlie", body: `<p>${prose("charlie", 90)}</p>` },
  "/d": { title: "Delta", body: `<p>${prose("delta", 90)}</p>` },
};

/** A document of `words` words of 5 letters and a full stop: 6 × words bytes (one passage, no title). */
const doc = (id: string, words: number) => ({ id, text: `${"lorem ".repeat(words).trim()}.` });

const PLANS = JSON.stringify({
  free: { quota: 100_000, per_minute: 100_000 },
  capped: { quota: 100_000, per_minute: 100_000, index_bytes: 2_000 },
  crawler: { quota: 100_000, per_minute: 100_000, index_bytes: 1_300, index_documents: null },
  racing: { quota: 100_000, per_minute: 100_000, index_bytes: 4_500 },
});

type Store = { env: Record<string, string>; close(): Promise<void> };
const STORES: Array<[string, () => Promise<Store>]> = [
  ["SQLite", async () => {
    const dir = tempDir("quarry-coll-bytes-");
    return { env: { QUARRY_DATA_DIR: dir }, close: async () => rmSync(dir, { recursive: true, force: true }) };
  }],
  ["PostgreSQL", async () => {
    const db = await tempDatabase("coll_bytes");
    return { env: { QUARRY_DATABASE_URL: db.url }, close: db.drop };
  }],
];

let site: Server;
let base: string;
beforeAll(async () => {
  ({ server: site, base } = await startDocsSite(PAGES));
});
afterAll(async () => {
  await new Promise((r) => site?.close(r));
});


describe.each(STORES)("index_bytes (%s)", (_name, openStore) => {
  let store: Store;
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    store = await openStore();
    t = await makeApp({
      storage: "sqlite",
      pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }),
      env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: PLANS, ...store.env },
    });
    t.clock.now = () => Date.now();
    key = (await t.key("capped", ["scrape", "search"], "capped")).secret;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  const { post, get } = jsonCalls(() => t, () => key);
  const held = async (k = key) => ((await get("/v1/collections", k)).body.collections as Json[]).reduce((n, c) => n + c.bytes, 0);

  it("refuses documents that would pass it across the account's collections, naming the limit, with nothing added", async () => {
    for (const name of ["notes", "memos"]) expect((await post("/v1/collections", { name })).status).toBe(201);
    expect((await post("/v1/collections/notes/documents", { documents: [doc("a", 150), doc("b", 150)] })).status).toBe(200);
    expect(await held()).toBe(1_800);
    // 300 more bytes in the other collection would make 2,100: refused whole, the small one with it.
    const refused = await post("/v1/collections/memos/documents", { documents: [doc("c", 25), doc("d", 25)] });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "index_full", limit: "index_bytes", held: 1_800, adding: 300, allowed: 2_000 });
    expect(refused.body.error.message).toMatch(/index_bytes/);
    expect((await get("/v1/collections/memos")).body).toMatchObject({ documents: 0, passages: 0, bytes: 0 });
    expect((await get("/v1/collections/memos/documents")).body.documents).toEqual([]);
    // Up to the cap exactly is allowed.
    expect((await post("/v1/collections/memos/documents", { documents: [doc("c", 25), { id: "d", text: "z".repeat(50) }] })).status).toBe(200);
    expect(await held()).toBe(2_000);
  });

  it("counts a replaced document's difference; sending the same again, or a smaller one, is never refused", async () => {
    expect((await post("/v1/collections/notes/documents", { documents: [doc("a", 150)] })).body).toMatchObject({ unchanged: ["a"] });
    const grown = await post("/v1/collections/notes/documents", { documents: [doc("a", 151)] });
    expect(grown.status).toBe(403);
    expect(grown.body.error).toMatchObject({ code: "index_full", limit: "index_bytes", held: 2_000, adding: 6 });
    expect((await post("/v1/collections/notes/documents", { documents: [doc("a", 100)] })).body).toMatchObject({ replaced: ["a"] });
    expect(await held()).toBe(1_700);
    // The documents' sizes, the collections' bytes and what the cap counts agree.
    const docs = [...(await get("/v1/collections/notes/documents")).body.documents, ...(await get("/v1/collections/memos/documents")).body.documents] as Json[];
    expect(docs.reduce((n, d) => n + d.bytes, 0)).toBe(1_700);
    expect((await post("/v1/collections/notes/documents", { documents: [doc("a", 150)] })).status).toBe(200);
    expect(await held()).toBe(2_000);
    // Deleting frees its bytes.
    expect((await t.request("/v1/collections/memos/documents/d", { method: "DELETE", key })).status).toBe(200);
    expect(await held()).toBe(1_950);
  });

  it("refuses a scrape into a collection past it: 403 index_full naming the limit, nothing added", async () => {
    const res = await post("/v1/scrape", { url: `${base}/a`, collection: "notes" });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: "index_full", limit: "index_bytes", held: 1_950, allowed: 2_000 });
    expect((await get("/v1/collections/notes/documents")).body.documents.map((d: Json) => d.id)).toEqual(["a", "b"]);
    expect(await held()).toBe(1_950);
  });

  it("a crawl into a collection indexes the pages that fit; each page past it fails with index_full and index_limit, and the crawl goes on", async () => {
    const crawler = (await t.key("crawler", ["scrape", "search"], "crawler")).secret;
    expect((await post("/v1/collections", { name: "site" }, crawler)).status).toBe(201);
    const started = await post("/v1/crawl", { url: `${base}/`, collection: "site", limit: 10, max_depth: 1, sitemap: "skip", formats: ["markdown"] }, crawler);
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    let job: Json = {};
    for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      job = (await get(`/v1/crawl/${started.body.id}`, crawler)).body;
      if (["completed", "failed", "cancelled"].includes(job.status)) break;
    }
    expect(job.status).toBe("completed");
    expect(job.stopped_reason).toBeNull();
    // Every page was read: the ones that fit are indexed, the others say why.
    expect(job.completed + job.failed).toBe(5);
    expect(job.completed).toBeGreaterThanOrEqual(1);
    expect(job.failed).toBeGreaterThanOrEqual(1);
    const failed = (job.data as Json[]).filter((p) => p.error);
    expect(failed.length).toBe(job.failed);
    for (const p of failed) expect(p).toMatchObject({ error: "index_full", index_limit: "index_bytes" });
    expect(job.failures.map((f: Json) => f.error)).toEqual(failed.map(() => "index_full"));
    const info = (await get("/v1/collections/site", crawler)).body;
    expect(info.documents).toBe(job.completed);
    expect(info.bytes).toBeLessThanOrEqual(1_300);
    expect(info.bytes).toBeGreaterThan(0);
    const indexed = ((await get("/v1/collections/site/documents", crawler)).body.documents as Json[]).map((d) => d.id).sort();
    expect(indexed).toEqual((job.data as Json[]).filter((p) => !p.error).map((p) => p.url).sort());
  }, 90_000);

  it("adds at once into several collections never pass it together", async () => {
    const racer = (await t.key("racer", ["scrape"], "racing")).secret;
    for (const name of ["r1", "r2", "r3", "r4"]) expect((await post("/v1/collections", { name }, racer)).status).toBe(201);
    // Room for five documents of 900 bytes; twelve sent at once, three into each collection.
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => post(`/v1/collections/r${(i % 4) + 1}/documents`, { documents: [doc(`x${i}`, 150)] }, racer)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
    for (const a of answers.filter((x) => x.status !== 200)) expect(a.body.error).toMatchObject({ code: "index_full", limit: "index_bytes" });
    expect(await held(racer)).toBe(4_500);
  }, 30_000);
});
