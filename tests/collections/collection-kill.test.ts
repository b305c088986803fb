/**
 * A real `quarry serve` process is SIGKILLed in the middle of a crawl into a collection (api.md §11:
 * "the page and its indexing are one durable step") and started again on the same SQLite file: the
 * job resumes and finishes; no page is lost, none is indexed twice (a page indexed before the kill
 * keeps its version), and a search finds each page once. The crawl is held mid-way by one page of
 * the site that does not answer until the server is killed, not by a sleep.
 */
import { createServer, type Server as HttpServer, type ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";
import { allPages, json, waitFor, type Job } from "../helpers/job-http.ts";

/** Home links six quick pages and /held; /held links four pages more, found only once it answers. */
const QUICK = ["/p1", "/p2", "/p3", "/p4", "/p5", "/p6"];
const BEHIND = ["/q1", "/q2", "/q3", "/q4"];
const ALL = ["/", ...QUICK, "/held", ...BEHIND];
const WORDS = ["falcon", "harbour", "quartz", "meadow", "glacier", "lantern", "orchid", "tundra", "canyon", "ember", "violet", "cobalt"];
/** Each page has one word no other page has, to search it by. */
const wordOf = (path: string) => WORDS[ALL.indexOf(path)]!;

function html(path: string, links: string[]): string {
  const word = wordOf(path);
  return `<!doctype html><html lang="en"><head><title>Page ${path}</title></head><body><main><article><h1>The ${word} page</h1>` +
    `<p>This page of the durability site is about the ${word}, and only this page mentions the ${word} at all. It has enough words to be read as an article.</p>` +
    `${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</article></main></body></html>`;
}

let site: HttpServer;
let base: string;
let holding = true;
const held: ServerResponse[] = [];
let heldAsked: () => void;
const heldSeen = new Promise<void>((r) => (heldAsked = r));
const hits: string[] = [];
let server: Server | null = null;

beforeAll(async () => {
  site = createServer((req, res) => {
    const path = req.url ?? "/";
    hits.push(path);
    if (path === "/robots.txt") return void res.writeHead(404).end();
    const send = (links: string[]) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html(path, links));
    if (path === "/") return void send([...QUICK, "/held"]);
    if (path === "/held") {
      if (!holding) return void send(BEHIND);
      held.push(res);
      heldAsked();
      return;
    }
    if (ALL.includes(path)) return void send(["/"]);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => site.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
});
afterAll(async () => {
  await server?.stop("SIGKILL");
  for (const res of held) res.destroy();
  await new Promise((r) => site?.close(r));
});

describe("SIGKILL during a crawl into a collection", () => {
  it("resumes after a restart on the same SQLite file: no page lost, none indexed twice, each found once", async () => {
    const dir = tempDataDir();
    const env = { QUARRY_DATA_DIR: dir, QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":100000}}' };
    const { key } = createKeyCli(env, "acme", "scrape,search");
    server = await startServer("node", env);
    const created = await json(`${server.url}/v1/collections`, key, { method: "POST", body: JSON.stringify({ name: "site" }) });
    expect(created.name).toBe("site");
    const started = await json(`${server.url}/v1/crawl`, key, { method: "POST", body: JSON.stringify({ url: `${base}/`, collection: "site", max_depth: 3, limit: 50, sitemap: "skip" }) });
    expect(started.id, JSON.stringify(started)).toBeTruthy();

    // Mid-way: the quick pages are in, /held is being read, the pages behind it are not yet known.
    await heldSeen;
    const before = await waitFor(`${server.url}/v1/crawl/${started.id}`, key, (j) => j.completed >= 1 + QUICK.length, 30_000);
    expect(before.status).toBe("running");
    const indexedBefore = (await json(`${server.url}/v1/collections/site/documents`, key)).documents as Job[];
    expect(indexedBefore.map((d) => new URL(d.id).pathname).sort()).toEqual(["/", ...QUICK].sort());
    await server.stop("SIGKILL");
    holding = false;
    const hitsAtKill = hits.length;

    server = await startServer("node", env);
    const after = await waitFor(`${server.url}/v1/crawl/${started.id}`, key, (j) => ["completed", "failed", "cancelled"].includes(j.status), 60_000);
    expect(after.status, JSON.stringify(after).slice(0, 500)).toBe("completed");

    // No page lost, none twice: in the job and in the collection.
    const pages = await allPages(after, server.url, key);
    expect(pages.map((p) => new URL(p.url).pathname).sort()).toEqual([...ALL].sort());
    const info = await json(`${server.url}/v1/collections/site`, key);
    expect(info.documents).toBe(ALL.length);
    const docs = (await json(`${server.url}/v1/collections/site/documents`, key)).documents as Job[];
    expect(docs.map((d) => new URL(d.id).pathname).sort()).toEqual([...ALL].sort());
    // A page indexed before the kill was not indexed again, nor read again.
    for (const d of indexedBefore) expect(docs.find((x) => x.id === d.id)?.updated_at, d.id).toBe(d.updated_at);
    expect(hits.slice(hitsAtKill).filter((p) => p !== "/robots.txt" && p !== "/held" && !BEHIND.includes(p))).toEqual([]);
    // Each page is found once, by its own word.
    for (const path of ALL) {
      const found = await json(`${server.url}/v1/collections/site/search`, key, { method: "POST", body: JSON.stringify({ query: wordOf(path) }) });
      expect(found.results.map((r: Job) => new URL(r.url).pathname), path).toEqual([path]);
    }
  }, 120_000);
});
