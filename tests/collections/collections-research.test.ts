/**
 * Collections as sources and as a destination, in process on SQLite (api.md §11): `POST /v1/research`
 * over a crawled collection with `web: false` (no engine asked, no page fetched, only the collection's
 * pages cited) and beside the web; `POST /v1/scrape` with `collection` (added, unchanged, replaced,
 * refused past `index_documents` with nothing added); the documents route's 8 MB body cap.
 */
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeApp, type TestApp, jsonCalls, type Json } from "../helpers/app.ts";
import { replayEnv, startReplayServer, type ReplayServer } from "../helpers/replay-server.ts";
import { localPages, searxngBody } from "../research/fixtures.ts";
import { docPage, startDocsSite, type DocsPages } from "./docs-site.ts";

const PAGES: DocsPages = {
  "/": { title: "Acme Gateway documentation", body: '<p>Welcome to the Acme Gateway manual.</p><ul><li><a href="/install">Installing</a></li><li><a href="/security">Security</a></li><li><a href="/limits">Limits</a></li></ul>' },
  "/install": { title: "Installing the gateway", body: "<h2>Requirements</h2><p>The gateway runs on any Linux host with at least two gigabytes of memory and a recent kernel. It listens on port 8443 by default and stores its state in a local database file next to the binary.</p>" },
  "/security": { title: "Security", body: "<h2>Key rotation</h2><p>Signing keys are rotated every ninety days. To rotate the signing keys by hand, run the rotate command and restart every node; old keys stay valid for one day so that tokens signed before the rotation keep working.</p><h2>Audit log</h2><p>Every administrative action is written to the audit log with the operator's name and the time of the change.</p>" },
  "/limits": { title: "Limits", body: "<h2>Request limits</h2><p>Each client may send at most six hundred requests per minute. Clients that go past the limit receive an answer with status 429 and a header telling them when to retry.</p>" },
  // Not linked from the manual, so not in the collection: the web engine's result.
  "/blog": { title: "Why we rotate signing keys", body: "<p>Our team rotates signing keys often because a leaked key is only useful to an attacker until the next rotation. Rotating signing keys every ninety days is a common compromise between safety and effort.</p>" },
  "/notes": { title: "Release notes", body: "<h2>Version 2</h2><p>Version two of the gateway adds request tracing and a faster configuration loader for large clusters.</p>" },
};

let site: Server;
let base: string;
let replay: ReplayServer;
let t: TestApp;
let key: string;
const pages = { ...PAGES };
/** Requests the site received, by path. */
let seen: string[] = [];

beforeAll(async () => {
  ({ server: site, base, seen } = await startDocsSite(pages));
  replay = await startReplayServer();
  // Only SearXNG answers (with the local blog post); the other engines fail.
  Object.assign(replay.faults, { duckduckgo: "500", wikipedia: "500", brave: "500" });
  t = await makeApp({
    storage: "sqlite",
    pages: localPages(),
    env: {
      ...replayEnv(replay.url),
      QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
      QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":1000},"tiny":{"quota":1000,"per_minute":1000,"index_documents":1}}',
    },
  });
  t.clock.now = () => Date.now();
  key = (await t.key("acme", ["scrape", "search", "research"])).secret;
  expect((await post("/v1/collections", { name: "gateway-docs" })).status).toBe(201);
  const started = await post("/v1/crawl", { url: `${base}/`, collection: "gateway-docs", limit: 20, max_depth: 2, sitemap: "skip", formats: ["text"] });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  for (const until = Date.now() + 60_000; ; ) {
    const job = (await get(`/v1/crawl/${started.body.id}`)).body;
    if (job.status === "completed" && job.completed === 4) break;
    if (["failed", "cancelled"].includes(job.status) || (job.status === "completed" && job.completed !== 4) || Date.now() > until) throw new Error(`the crawl ended ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}, 90_000);
afterAll(async () => {
  await t?.close();
  await replay?.close();
  await new Promise((r) => site?.close(r));
});

const { post, get } = jsonCalls(() => t, () => key);
const QUESTION = "How often are signing keys rotated?";
const collectionUrls = () => ["/", "/install", "/security", "/limits"].map((p) => `${base}${p}`);
/** What a page of the site says, as text. */
const pageText = (path: string) => { const p = PAGES[path]!; return docPage(p.title, p.body).replace(/<[^>]+>/g, " ").replace(/\s+/g, " "); };
/** The source a finding cites, by id. */
const cited = (body: Json, id: string): Json => body.sources.find((s: Json) => s.id === id);

describe("POST /v1/research with collections", () => {
  it("web: false reads only the collection: no engine asked, no page fetched, every source and citation a page of the collection, the findings from the passage that answers", async () => {
    const hits = { ...replay.hits };
    seen.length = 0;
    const res = await post("/v1/research", { query: QUESTION, collections: ["gateway-docs"], web: false });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const body = res.body;
    expect(Object.keys(body.meta.backends)).toEqual(["collection:gateway-docs"]);
    expect(body.meta.backends["collection:gateway-docs"]).toMatchObject({ status: "ok" });
    expect(replay.hits).toEqual(hits);
    expect(seen).toEqual([]);
    expect(body.sources.length).toBeGreaterThan(0);
    for (const s of body.sources) expect(collectionUrls()).toContain(s.url);
    expect(body.sources[0].url).toBe(`${base}/security`);
    // The report's sentences cite sources of the collection; the first finding is the answer, from /security.
    expect(body.report.findings.length).toBeGreaterThan(0);
    for (const f of body.report.findings) for (const id of f.citations) expect(collectionUrls()).toContain(cited(body, id)?.url);
    // Every finding is a sentence of a page it cites (extractive: the collection's own words).
    for (const f of body.report.findings) {
      const words = f.text.replace(/\s*\[S\d+\]/g, "").trim();
      const said = f.citations.map((id: string) => pageText(new URL(cited(body, id).url).pathname)).join(" ");
      expect(said, words).toContain(words.replace(/[.!?]$/, ""));
    }
    const [first] = body.report.findings;
    expect(first.text).toMatch(/rotated every ninety days/);
    expect(first.citations.map((id: string) => cited(body, id).url)).toContain(`${base}/security`);
    expect(body.report.summary).toMatch(/ninety days/);
    expect(JSON.stringify(body.report)).not.toMatch(/six hundred requests/);
    expect(body.meta.pages).toMatchObject({ failed: 0, unread: [] });
  }, 30_000);

  it("web: true (the default) adds the collection's passages to the web's sources, each cited; collection pages are read from the index, web pages fetched", async () => {
    replay.bodies.searxng = searxngBody(QUESTION, [{ url: `${base}/blog`, title: "Why we rotate signing keys", content: "Our team rotates signing keys often." }]);
    seen.length = 0;
    const res = await post("/v1/research", { query: QUESTION, collections: ["gateway-docs"] });
    delete replay.bodies.searxng;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const body = res.body;
    expect(body.meta.backends.searxng.status).toBe("ok");
    expect(body.meta.backends["collection:gateway-docs"].status).toBe("ok");
    const urls = body.sources.map((s: Json) => s.url);
    expect(urls).toEqual(expect.arrayContaining([`${base}/blog`, `${base}/security`]));
    expect(seen).toContain("/blog");
    expect(seen).not.toContain("/security");
    const citedUrls = new Set(body.report.findings.flatMap((f: Json) => f.citations.map((id: string) => cited(body, id).url)));
    expect(citedUrls.has(`${base}/security`)).toBe(true);
  }, 30_000);

  it("streams the same research (stream: true): progress, then a result citing only the collection", async () => {
    seen.length = 0;
    const res = await t.request("/v1/research", { method: "POST", key, json: { query: QUESTION, collections: ["gateway-docs"], web: false, stream: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const events = (await res.text()).split(/\n\n+/).filter((b) => b.trim()).map((b) => ({
      event: /^event: ?(.*)$/m.exec(b)?.[1],
      data: JSON.parse(b.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n")),
    }));
    expect(events.filter((e) => e.event === "progress").map((e) => e.data.stage)).toEqual(expect.arrayContaining(["searching", "ranking", "writing"]));
    const result = events.find((e) => e.event === "result")!.data;
    expect(result.sources[0].url).toBe(`${base}/security`);
    for (const s of result.sources) expect(collectionUrls()).toContain(s.url);
    expect(seen).toEqual([]);
  });

  it("a collection with no matching passage and web: false is an empty report, not an engine failure", async () => {
    const res = await post("/v1/research", { query: "photosynthesis in tropical ferns", collections: ["gateway-docs"], web: false });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.sources).toEqual([]);
    expect(res.body.report.findings).toEqual([]);
    expect(res.body.meta.notice).toMatch(/nothing found/);
  });

  it("refuses an unknown collection and another account's with a 404 (streamed or not), and web: false without collections with a 400", async () => {
    for (const extra of [{ web: false }, {}, { stream: true }]) {
      const res = await post("/v1/research", { query: QUESTION, collections: ["no-such"], ...extra });
      expect(res.status, JSON.stringify(extra)).toBe(404);
      expect(res.body.error.code).toBe("not_found");
      expect(res.body.error.message).toMatch(/no-such/);
    }
    const other = (await t.key("globex", ["research"])).secret;
    const theirs = await post("/v1/research", { query: QUESTION, collections: ["gateway-docs"], web: false }, other);
    expect(theirs.status).toBe(404);
    expect(JSON.stringify(theirs.body)).not.toMatch(/ninety/);
    const bare = await post("/v1/research", { query: QUESTION, web: false });
    expect(bare.status).toBe(400);
    expect(bare.body.error.message).toMatch(/web: false needs collections/);
    expect((await post("/v1/research", { query: QUESTION, collections: ["Bad Name"] })).status).toBe(400);
  });
});

describe("POST /v1/search with collections", () => {
  it("answers from what the collection holds now: a document added after a search is found by the same search at once (no cached answer)", async () => {
    const ask = () => post("/v1/search", { query: "harbour crane maintenance schedule", collections: ["gateway-docs"], web: false });
    expect((await ask()).body.results.map((r: Json) => r.url)).not.toContain(`${base}/cranes`);
    const added = await post("/v1/collections/gateway-docs/documents", { documents: [{ url: `${base}/cranes`, title: "Crane maintenance", text: "The harbour crane maintenance schedule puts every crane in the workshop once a quarter." }] });
    expect(added.status).toBe(200);
    const again = await ask();
    expect(again.body.meta.cached).toBeFalsy();
    expect(again.body.results.map((r: Json) => r.url)).toContain(`${base}/cranes`);
    expect((await t.request(`/v1/collections/gateway-docs/documents/${encodeURIComponent(`${base}/cranes`)}`, { method: "DELETE", key })).status).toBe(200);
  });
});

describe("the account's own documents without a URL, as sources", () => {
  const RUNBOOK = "Before you rotate the signing keys outside the ninety day schedule, page the security lead and open an incident.";
  const ESCALATION = "A gateway outage that lasts longer than fifteen minutes is escalated to the platform director.";
  const citation = (id: string) => `quarry://collections/runbooks/documents/${encodeURIComponent(id)}`;

  beforeAll(async () => {
    expect((await post("/v1/collections", { name: "runbooks" })).status).toBe(201);
    const added = await post("/v1/collections/runbooks/documents", { documents: [
      { id: "rotate-keys", title: "Emergency key rotation", markdown: `# Emergency key rotation\n\n${RUNBOOK}` },
      { id: "on call/escalation", title: "Escalation", text: ESCALATION },
    ] });
    expect(added.status).toBe(200);
  });

  it("POST /v1/search cites each by a stable quarry: URL, which GET under /v1 reads back", async () => {
    const res = await post("/v1/search", { query: "rotate signing keys outside the schedule", collections: ["runbooks"], web: false });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.meta.backends["collection:runbooks"]).toMatchObject({ status: "ok", results: 1 });
    expect(res.body.results).toHaveLength(1);
    expect(res.body.results[0]).toMatchObject({ url: citation("rotate-keys"), title: "Emergency key rotation" });
    expect(res.body.results[0].content).toMatch(/page the security lead/);
    // The same document is cited the same way by the next search.
    expect((await post("/v1/search", { query: "security lead incident", collections: ["runbooks"], web: false })).body.results[0].url).toBe(citation("rotate-keys"));
    // The citation is the document's path under /v1: an id with a slash and a space is encoded once.
    const escalation = (await post("/v1/search", { query: "outage escalated director", collections: ["runbooks"], web: false })).body.results[0].url;
    expect(escalation).toBe("quarry://collections/runbooks/documents/on%20call%2Fescalation");
    for (const [url, said] of [[citation("rotate-keys"), RUNBOOK], [escalation, ESCALATION]] as const) {
      const read = await get(`/v1/${url.slice("quarry://".length)}`);
      expect(read.status, url).toBe(200);
      expect(read.body.citation).toBe(url);
      expect(read.body.url).toBeNull();
      expect(read.body.text.map((p: Json) => p.text).join(" ")).toContain(said);
    }
    expect((await get("/v1/collections/runbooks/documents/nothing-here")).status).toBe(404);
    // A page with a URL is cited by its URL, as before.
    expect((await get(`/v1/collections/gateway-docs/documents/${encodeURIComponent(`${base}/security`)}`)).body).toMatchObject({ citation: `${base}/security`, url: `${base}/security` });
    // Another account's document is a 404; a key with search alone may read it.
    const other = (await t.key("soylent", ["search"])).secret;
    expect((await get(`/v1/${citation("rotate-keys").slice("quarry://".length)}`, other)).status).toBe(404);
    const searchOnly = (await t.key("acme", ["search"])).secret;
    expect((await get(`/v1/${citation("rotate-keys").slice("quarry://".length)}`, searchOnly)).status).toBe(200);
  });

  it("POST /v1/research with web: false cites them: nothing fetched, the finding from the document that says it", async () => {
    const hits = { ...replay.hits };
    seen.length = 0;
    const res = await post("/v1/research", { query: "What must I do before rotating the signing keys outside the schedule?", collections: ["runbooks"], web: false });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(replay.hits).toEqual(hits);
    expect(seen).toEqual([]);
    const body = res.body;
    expect(body.sources.length).toBeGreaterThan(0);
    for (const s of body.sources) expect(s.url).toMatch(/^quarry:\/\/collections\/runbooks\/documents\//);
    expect(body.sources[0]).toMatchObject({ url: citation("rotate-keys") });
    const [first] = body.report.findings;
    expect(first.text).toMatch(/page the security lead/);
    expect(first.citations.map((id: string) => cited(body, id).url)).toContain(citation("rotate-keys"));
    expect(body.meta.pages).toMatchObject({ failed: 0, unread: [] });
  }, 30_000);
});

describe("POST /v1/scrape with collection", () => {
  it("indexes the page under its URL: added, then unchanged when read again, replaced when it changed; searched once", async () => {
    expect((await post("/v1/collections", { name: "scraped" })).status).toBe(201);
    const url = `${base}/notes`;
    const first = await post("/v1/scrape", { url, formats: ["text"], collection: "scraped" });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.meta.collection).toEqual({ name: "scraped", document: url, outcome: "added" });
    // Only the asked format is answered, though the page was indexed from its markdown.
    expect(first.body.data.markdown).toBeUndefined();
    expect((await post("/v1/collections/scraped/search", { query: "request tracing" })).body.results.map((r: Json) => r.url)).toEqual([url]);
    const updated = (await get("/v1/collections/scraped/documents")).body.documents[0].updated_at;

    const again = await post("/v1/scrape", { url, formats: ["text"], collection: "scraped" });
    expect(again.body.meta.collection.outcome).toBe("unchanged");
    expect(again.body.meta.cached).toBe(false);
    expect((await get("/v1/collections/scraped/documents")).body.documents[0].updated_at).toBe(updated);

    pages["/notes"] = { title: "Release notes", body: "<h2>Version 3</h2><p>Version three of the gateway replaces request tracing with distributed spans exported over OTLP.</p>" };
    const changed = await post("/v1/scrape", { url, collection: "scraped" });
    expect(changed.body.meta.collection.outcome).toBe("replaced");
    expect((await get("/v1/collections/scraped")).body.documents).toBe(1);
    const found = (await post("/v1/collections/scraped/search", { query: "distributed spans OTLP" })).body.results;
    expect(found.map((r: Json) => r.url)).toEqual([url]);
    expect(JSON.stringify(found)).not.toMatch(/configuration loader/);

    // A page that answers 404 is returned but not indexed, and says why.
    const missingPage = await post("/v1/scrape", { url: `${base}/gone`, collection: "scraped" });
    expect(missingPage.status).toBe(200);
    expect(missingPage.body.meta.collection).toMatchObject({ outcome: "skipped", reason: expect.stringMatching(/404/) });
    expect((await get("/v1/collections/scraped")).body.documents).toBe(1);
  });

  it("refuses another account's or an unknown collection with a 404 before reading the page; a key without scrape cannot fill one", async () => {
    const other = (await t.key("initrode", ["scrape", "search"])).secret;
    seen.length = 0;
    const theirs = await post("/v1/scrape", { url: `${base}/install`, collection: "scraped" }, other);
    expect(theirs.status).toBe(404);
    expect((await post("/v1/scrape", { url: `${base}/install`, collection: "nothing" })).status).toBe(404);
    expect(seen).toEqual([]);
    const searchOnly = (await t.key("acme", ["search"])).secret;
    const refused = await post("/v1/scrape", { url: `${base}/install`, collection: "scraped" }, searchOnly);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("insufficient_scope");
    expect((await get("/v1/collections/scraped")).body.documents).toBe(1);
  });

  it("past the plan's index_documents is a 403 index_full with nothing added", async () => {
    const tiny = (await t.key("umbrella", ["scrape", "search"], "tiny")).secret;
    expect((await post("/v1/collections", { name: "one", description: null }, tiny)).status).toBe(201);
    expect((await post("/v1/scrape", { url: `${base}/install`, collection: "one" }, tiny)).body.meta.collection.outcome).toBe("added");
    const refused = await post("/v1/scrape", { url: `${base}/limits`, collection: "one" }, tiny);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("index_full");
    expect(refused.body.error.message).toMatch(/index_documents/);
    expect((await get("/v1/collections/one", tiny)).body).toMatchObject({ documents: 1 });
    expect((await post("/v1/collections/one/search", { query: "requests per minute" }, tiny)).body.results).toEqual([]);
    // The same page read again is not a new document: it is left as it is, within the limit.
    expect((await post("/v1/scrape", { url: `${base}/install`, collection: "one" }, tiny)).body.meta.collection.outcome).toBe("unchanged");
    // The refused scrape cost nothing: two units for the two answered.
    expect((await get("/v1/usage", tiny)).body.endpoints.scrape).toBe(2);
  });
});

describe("the documents route's body", () => {
  const doc = (i: number, size: number) => ({ id: `big-${i}`, title: `Handbook part ${i}`, text: `Part ${i} of the operations handbook. `.repeat(Math.floor(size / 40)) });

  it("takes up to 8 MB (far past the other routes' 64 KiB), and a larger body is a clear 413 with nothing added", async () => {
    expect((await post("/v1/collections", { name: "handbook" })).status).toBe(201);
    const small = await post("/v1/collections/handbook/documents", { documents: [doc(1, 600_000), doc(2, 600_000), doc(3, 600_000)] });
    expect(small.status, JSON.stringify(small.body).slice(0, 300)).toBe(200);
    expect(small.body.added).toEqual(["big-1", "big-2", "big-3"]);
    const big = await post("/v1/collections/handbook/documents", { documents: Array.from({ length: 10 }, (_, i) => doc(10 + i, 950_000)) });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe("payload_too_large");
    expect(big.body.error.message).toMatch(/8 MB/);
    expect((await get("/v1/collections/handbook")).body.documents).toBe(3);
    // Every other route keeps the gateway's 64 KiB.
    const scrape = await post("/v1/scrape", { url: `${base}/`, formats: ["markdown"], json_options: { prompt: "x".repeat(70_000) } });
    expect(scrape.status).toBe(413);
    expect(scrape.body.error.message).toMatch(/64 KiB/);
  }, 30_000);
});
