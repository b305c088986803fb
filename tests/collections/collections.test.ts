/**
 * Collections end to end, in process on SQLite (api.md §11): a local documentation site crawled into
 * a collection and searched over HTTP with cited passages; crawled again after a page changed and one
 * was removed; the account's own documents beside them; another account, a key without `scrape` and
 * the plan's `index_documents` refused cleanly.
 */
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp, jsonCalls, type Json } from "../helpers/app.ts";
import { startDocsSite, type DocsPages } from "./docs-site.ts";

const PAGES: DocsPages = {
  "/": { title: "Acme Gateway documentation", body: '<p>Welcome to the Acme Gateway manual.</p><ul><li><a href="/install">Installing</a></li><li><a href="/security">Security</a></li><li><a href="/limits">Limits</a></li></ul>' },
  "/install": { title: "Installing the gateway", body: "<h2>Requirements</h2><p>The gateway runs on any Linux host with at least two gigabytes of memory and a recent kernel. It listens on port 8443 by default and stores its state in a local database file next to the binary.</p>" },
  "/security": { title: "Security", body: "<h2>Key rotation</h2><p>Signing keys are rotated every ninety days. To rotate them by hand, run the rotate command and restart every node; old keys stay valid for one day so that tokens signed before the rotation keep working.</p><h2>Audit log</h2><p>Every administrative action is written to the audit log with the operator's name and the time of the change.</p>" },
  "/limits": { title: "Limits", body: "<h2>Request limits</h2><p>Each client may send at most six hundred requests per minute. Clients that go past the limit receive an answer with status 429 and a header telling them when to retry.</p>" },
};

let site: Server;
let base: string;
let t: TestApp;
let key: string;
const pages = { ...PAGES };

beforeAll(async () => {
  ({ server: site, base } = await startDocsSite(pages));
  t = await makeApp({
    storage: "sqlite",
    pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }),
    env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":1000},"tiny":{"quota":1000,"per_minute":1000,"index_documents":6}}' },
  });
  t.clock.now = () => Date.now();
  key = (await t.key("acme", ["scrape", "search"])).secret;
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => site?.close(r));
});

const { post, get } = jsonCalls(() => t, () => key);
async function crawlInto(collection: string, k = key): Promise<Json> {
  const started = await post("/v1/crawl", { url: `${base}/`, collection, limit: 20, max_depth: 2, sitemap: "skip", formats: ["text"] }, k);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  for (const until = Date.now() + 60_000; Date.now() < until; ) {
    const job = (await get(`/v1/crawl/${started.body.id}`, k)).body;
    if (["completed", "failed", "cancelled"].includes(job.status)) return job;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the crawl did not finish within 60 s");
}
const search = (name: string, query: string, extra: Json = {}, k = key) => post(`/v1/collections/${name}/search`, { query, ...extra }, k);

describe("a collection filled by crawling a site", () => {
  it("is created once; the same name again is a 409", async () => {
    const made = await post("/v1/collections", { name: "gateway-docs", description: "Acme Gateway manual" });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ name: "gateway-docs", description: "Acme Gateway manual", documents: 0, passages: 0, bytes: 0 });
    expect((await post("/v1/collections", { name: "gateway-docs" })).body.error.code).toBe("collection_exists");
    expect((await post("/v1/collections", { name: "Bad Name!" })).status).toBe(400);
  });

  it("is filled by a crawl and answers a question with the passage that says it, its URL and its heading", async () => {
    const job = await crawlInto("gateway-docs");
    expect(job.status).toBe("completed");
    expect(job.completed).toBe(4);
    const info = (await get("/v1/collections/gateway-docs")).body;
    expect(info).toMatchObject({ name: "gateway-docs", documents: 4 });
    expect(info.passages).toBeGreaterThanOrEqual(4);
    const found = await search("gateway-docs", "how often are signing keys rotated?");
    expect(found.status).toBe(200);
    const [top] = found.body.results;
    expect(top.url).toBe(`${base}/security`);
    expect(top.title).toBe("Security");
    expect(top.passages[0].heading).toMatch(/Key rotation/);
    expect(top.passages[0].text).toMatch(/rotated every ninety days/);
    expect(found.body.meta).toMatchObject({ collection: "gateway-docs", results_count: found.body.results.length });
    // One unit of the search group (this key made no other search).
    expect((await get("/v1/usage")).body.endpoints.search).toBe(1);
  }, 90_000);

  it("crawled again: the changed page replaces its old version, the unchanged ones stay as they were, and a page the site dropped can be removed", async () => {
    const before = new Map<string, string>(((await get("/v1/collections/gateway-docs/documents")).body.documents as Json[]).map((d) => [d.id, d.updated_at]));
    pages["/limits"] = { title: "Limits", body: "<h2>Request limits</h2><p>Each client may now send at most nine hundred requests per minute, counted over a sliding window.</p>" };
    await new Promise((r) => setTimeout(r, 5));
    const job = await crawlInto("gateway-docs");
    expect(job.completed).toBe(4);
    const after = (await get("/v1/collections/gateway-docs/documents")).body.documents as Json[];
    expect(after).toHaveLength(4);
    for (const d of after) {
      if (d.id.endsWith("/limits")) expect(d.updated_at).not.toBe(before.get(d.id));
      else expect(d.updated_at, d.id).toBe(before.get(d.id));
    }
    const limits = (await search("gateway-docs", "requests per minute")).body.results;
    expect(limits.filter((r: Json) => r.url === `${base}/limits`)).toHaveLength(1);
    expect(limits[0].passages.map((p: Json) => p.text).join(" ")).toMatch(/nine hundred/);
    expect(JSON.stringify(limits)).not.toMatch(/six hundred/);
    // The site no longer has /install: its document is removed by id.
    const removed = await t.request(`/v1/collections/gateway-docs/documents/${encodeURIComponent(`${base}/install`)}`, { method: "DELETE", key });
    expect(removed.status).toBe(200);
    expect((await search("gateway-docs", "linux host memory requirements")).body.results.map((r: Json) => r.url)).not.toContain(`${base}/install`);
  }, 120_000);

  it("holds the account's own documents beside crawled pages, and searches both", async () => {
    const added = await post("/v1/collections/gateway-docs/documents", { documents: [{ id: "runbook-1", title: "On-call runbook", markdown: "# Rotating keys in an emergency\n\nPage the security lead before you rotate signing keys outside the ninety day schedule." }] });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ collection: "gateway-docs", added: ["runbook-1"], replaced: [], unchanged: [] });
    const ids = (await search("gateway-docs", "rotate signing keys")).body.results.map((r: Json) => r.id);
    expect(ids).toEqual(expect.arrayContaining(["runbook-1", `${base}/security`]));
    expect((await post("/v1/collections/gateway-docs/documents", { documents: [{ title: "no text" }] })).status).toBe(400);
  });

  it("is a 404 for another account on every route; a key without scrape cannot fill one; one without search cannot search", async () => {
    const other = (await t.key("globex", ["scrape", "search"])).secret;
    expect((await get("/v1/collections/gateway-docs", other)).status).toBe(404);
    expect((await search("gateway-docs", "keys", {}, other)).status).toBe(404);
    expect((await post("/v1/collections/gateway-docs/documents", { documents: [{ text: "x" }] }, other)).status).toBe(404);
    expect((await t.request("/v1/collections/gateway-docs", { method: "DELETE", key: other })).status).toBe(404);
    expect((await get("/v1/collections", other)).body).toEqual({ collections: [] });
    const crawl = await post("/v1/crawl", { url: `${base}/`, collection: "gateway-docs" }, other);
    expect(crawl.status).toBe(404);
    const searchOnly = (await t.key("acme", ["search"])).secret;
    expect((await post("/v1/collections/gateway-docs/documents", { documents: [{ text: "x" }] }, searchOnly)).status).toBe(403);
    expect((await search("gateway-docs", "keys", {}, searchOnly)).status).toBe(200);
    const scrapeOnly = (await t.key("acme", ["scrape"])).secret;
    expect((await search("gateway-docs", "keys", {}, scrapeOnly)).status).toBe(403);
  });

  it("refuses documents past the plan's index_documents with nothing half-added", async () => {
    const tiny = (await t.key("initech", ["scrape", "search"], "tiny")).secret;
    expect((await post("/v1/collections", { name: "notes" }, tiny)).status).toBe(201);
    const four = Array.from({ length: 4 }, (_, i) => ({ id: `n${i}`, text: `Note number ${i} about the quarterly planning meeting.` }));
    expect((await post("/v1/collections/notes/documents", { documents: four }, tiny)).status).toBe(200);
    const three = Array.from({ length: 3 }, (_, i) => ({ id: `m${i}`, text: `Memo ${i} on the budget.` }));
    const refused = await post("/v1/collections/notes/documents", { documents: three }, tiny);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("index_full");
    expect(refused.body.error.message).toMatch(/index_documents/);
    expect((await get("/v1/collections/notes", tiny)).body.documents).toBe(4);
    expect((await search("notes", "budget memo", {}, tiny)).body.results).toEqual([]);
  });

  it("is searched by POST /v1/search as one more engine; web: false leaves the engines out", async () => {
    const res = await post("/v1/search", { query: "how often are signing keys rotated", collections: ["gateway-docs"], web: false });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(Object.keys(res.body.meta.backends)).toEqual(["collection:gateway-docs"]);
    expect(res.body.meta.backends["collection:gateway-docs"]).toMatchObject({ status: "ok" });
    expect(res.body.results[0].url).toBe(`${base}/security`);
    expect(res.body.results[0].content).toMatch(/ninety days/);
    // Own documents without a URL are cited by their quarry: URL, not by their id.
    expect(res.body.results.map((r: Json) => r.url)).not.toContain("runbook-1");
    expect(res.body.results.map((r: Json) => r.url)).toContain("quarry://collections/gateway-docs/documents/runbook-1");
    expect((await post("/v1/search", { query: "keys", web: false })).status).toBe(400);
    expect((await post("/v1/search", { query: "keys", collections: ["nothing-here"], web: false })).status).toBe(404);
    const other = (await t.key("hooli", ["search"])).secret;
    const theirs = await post("/v1/search", { query: "how often are signing keys rotated", collections: ["gateway-docs"], web: false }, other);
    expect(theirs.status).toBe(404);
    expect(JSON.stringify(theirs.body)).not.toMatch(/ninety/);
  });

  it("is deleted with everything in it", async () => {
    expect((await t.request("/v1/collections/gateway-docs", { method: "DELETE", key })).status).toBe(200);
    expect((await get("/v1/collections/gateway-docs")).status).toBe(404);
    expect((await get("/v1/collections")).body.collections.map((c: Json) => c.name)).not.toContain("gateway-docs");
  });
});
