/**
 * Issue #28, item 3, with several instances: two Quarry instances (in process, each its own pool,
 * pg-boss and job engine) share one PostgreSQL. Account A's batch over slow hosts fills every
 * worker of both; account B's five-page crawl, started after it, completes as soon as one of A's
 * pages ends, whichever instance frees the worker: the fair choice is made by the store's claim
 * query, not by one process's memory. Before, pg-boss handed tasks out first in first out, and
 * B's pages waited behind every page of A's batch.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { heldResolver, startHeldSite, starvation, type Call, type HeldSite } from "../helpers/held-site.ts";
import { tempDatabase } from "../helpers/pg.ts";

let site: HeldSite;
let db: { url: string; drop(): Promise<void> };
const apps: TestApp[] = [];

beforeAll(async () => {
  site = await startHeldSite();
  db = await tempDatabase("fairness");
  for (let i = 0; i < 2; i++) {
    const t = await makeApp({
      storage: "sqlite", // with QUARRY_DATABASE_URL set: PostgreSQL and pg-boss, as a scaled server runs
      pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]), resolver: heldResolver }),
      env: {
        QUARRY_DATABASE_URL: db.url, QUARRY_PLANS: '{"free":{"quota":10000,"per_minute":10000}}', QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
        QUARRY_CRAWL_CONCURRENCY: "2", QUARRY_JOB_RECOVERY: "10s",
      },
      options: { services: { jobs: { watchdogMs: 200 } } },
    });
    t.clock.now = () => Date.now();
    apps.push(t);
  }
}, 60_000);
afterAll(async () => {
  while (site?.release());
  for (const t of apps) await t.close();
  await site?.close();
  await db?.drop();
}, 60_000);

let n = 0;
// Calls alternate between the instances, as behind a load balancer.
const call: Call = async (method, path, key, json) => (await apps[n++ % 2]!.request(path, { method, key, ...(json === undefined ? {} : { json }) })).json();

it("serves a second account's crawl within one page turn of the account that fills every worker of both instances", async () => {
  const a = (await apps[0]!.key("alpha", ["scrape"])).secret;
  const b = (await apps[1]!.key("beta", ["scrape"])).secret;
  const { turns, b: crawl, aCompleted } = await starvation(site, call, { a, b }, 4);
  expect(crawl.status).toBe("completed");
  expect(crawl.completed).toBe(5);
  // robots.txt, and the sitemap a crawl reads at its start page: not pages of the crawl.
  expect(site.quick.filter((p) => p !== "/robots.txt" && p !== "/sitemap.xml").sort()).toEqual(["/", "/p1", "/p2", "/p3", "/p4"]);
  expect(turns).toBe(1);
  expect(aCompleted).toBeLessThanOrEqual(1);
}, 90_000);
