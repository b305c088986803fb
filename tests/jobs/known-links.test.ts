/**
 * Links a crawl has seen committed to its frontier do not go back to the store: a menu linked
 * from every page is recorded once and costs the later pages no statement, and the crawl still
 * reads every page once.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";

const PAGES = 10;
let server: Server;
let base: string;
let t: TestApp;
const fetched: string[] = [];

beforeAll(async () => {
  // Every page links to every page: the menu of a small site.
  const menu = Array.from({ length: PAGES }, (_, i) => `<a href="/p/${i}">Page ${i}</a>`).join(" ");
  server = createServer((req, res) => {
    const m = /^\/p\/(\d+)$/.exec(req.url ?? "");
    if (!m) return void res.writeHead(404).end();
    fetched.push(req.url!);
    res.writeHead(200, { "content-type": "text/html" }).end(`<html><head><title>Page ${m[1]}</title></head><body><nav>${menu}</nav><main><p>Page ${m[1]} of a small site, with a few words.</p></main></body></html>`);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  t = await makeApp({
    storage: "sqlite",
    pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }),
    // One page at a time, so each page's transaction commits before the next page's links are sorted.
    env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_CRAWL_CONCURRENCY: "1", QUARRY_PLANS: '{"free":{"quota":null,"per_minute":1000}}' },
  });
  t.clock.now = () => Date.now();
});
afterAll(async () => {
  await t?.close();
  await new Promise((r) => server?.close(r));
});

it("sends a link to the store until a committed page has it in the frontier, then never again", async () => {
  const store = t.ports.jobs!.store;
  const sent: string[][] = [];
  const finish = store.finish.bind(store);
  store.finish = (task, page, found, skipped, now) => {
    sent.push(found.map((f) => f.url));
    return finish(task, page, found, skipped, now);
  };
  const key = (await t.key("acme", ["scrape"])).secret;
  const res = await t.request("/v1/crawl", { method: "POST", key, json: { url: `${base}/p/0`, limit: 100, max_depth: 5 } });
  const { id } = await res.json();
  let job: Record<string, any> = {};
  for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
    job = await (await t.request(`/v1/crawl/${id}`, { key })).json();
    if (job.status !== "queued" && job.status !== "running") break;
  }
  expect(job).toMatchObject({ status: "completed", discovered: PAGES, completed: PAGES, failed: 0 });
  expect([...fetched].sort()).toEqual(Array.from({ length: PAGES }, (_, i) => `/p/${i}`).sort());
  // The first page hands over the whole menu; every later page finds it known.
  expect(sent).toHaveLength(PAGES);
  expect(sent[0]).toHaveLength(PAGES);
  expect(sent.slice(1).flat()).toEqual([]);
});
