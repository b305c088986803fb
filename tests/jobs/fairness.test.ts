/**
 * Issue #28, item 3: one account's jobs must not starve another's. Account A's batch over slow
 * hosts fills every worker of the server (embedded, SQLite); account B's five-page crawl, started
 * after it, completes as soon as one of A's pages ends (one page turn), not after A's backlog of
 * 44 pages. Before the queue was fair, B's pages waited behind every page of A's batch.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { heldResolver, startHeldSite, starvation, type Call, type HeldSite } from "../helpers/held-site.ts";

let site: HeldSite;
let t: TestApp;

beforeAll(async () => {
  site = await startHeldSite();
  t = await makeApp({
    storage: "sqlite",
    pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]), resolver: heldResolver }),
    env: { QUARRY_PLANS: '{"free":{"quota":10000,"per_minute":10000}}', QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_CRAWL_CONCURRENCY: "4" },
    options: { services: { jobs: { watchdogMs: 200 } } },
  });
  t.clock.now = () => Date.now();
});
afterAll(async () => {
  while (site?.release());
  await t?.close();
  await site?.close();
});

const call: Call = async (method, path, key, json) => (await t.request(path, { method, key, ...(json === undefined ? {} : { json }) })).json();

it("serves a second account's crawl within one page turn of the account that fills every worker", async () => {
  const a = (await t.key("alpha", ["scrape"])).secret;
  const b = (await t.key("beta", ["scrape"])).secret;
  const { turns, b: crawl, aCompleted } = await starvation(site, call, { a, b }, 4);
  expect(crawl.status).toBe("completed");
  expect(crawl.completed).toBe(5);
  // robots.txt, and the sitemap a crawl reads at its start page: not pages of the crawl.
  expect(site.quick.filter((p) => p !== "/robots.txt" && p !== "/sitemap.xml").sort()).toEqual(["/", "/p1", "/p2", "/p3", "/p4"]);
  // One of A's pages had to end to free a worker; from then on B had it to itself (fewest pages running).
  expect(turns).toBe(1);
  expect(aCompleted).toBeLessThanOrEqual(1);
}, 60_000);
