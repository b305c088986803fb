/**
 * A robots.txt that answers 5xx or cannot be fetched disallows everything (RFC 9309 §2.3.1.4).
 * The pages that kept out used to be reported `robots_disallowed`, so a crawl of a site that was
 * down or refused the connection said the site's robots.txt forbade it. They are
 * `robots_unreachable` now; a robots.txt that really disallows keeps `robots_disallowed`.
 */
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";

let t: TestApp;
let key: string;
let down: PageServer;
let strict: PageServer;

async function closedPort(): Promise<number> {
  const probe = createServer().listen(0, "127.0.0.1");
  await new Promise((r) => probe.once("listening", r));
  const port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  return port;
}

async function crawl(url: string): Promise<Record<string, any>> {
  const { id } = await (await t.request("/v1/crawl", { method: "POST", key, json: { url, limit: 3 } })).json();
  for (let i = 0; i < 200; i++) {
    const job = await (await t.request(`/v1/crawl/${id}`, { key })).json();
    if (["completed", "failed", "cancelled"].includes(job.status)) return job;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`crawl ${id} did not end`);
}

beforeAll(async () => {
  down = await startPageServer();
  down.route("/robots.txt", send("text/plain", "busy", 503));
  down.route("/", send("text/html", "<html><body><p>Never read.</p></body></html>"));
  strict = await startPageServer();
  strict.route("/robots.txt", send("text/plain", "User-agent: *\nDisallow: /\n"));
  strict.route("/", send("text/html", "<html><body><p>Never read.</p></body></html>"));
  t = await makeApp({ storage: "sqlite", pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }), env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32" } });
  t.clock.now = () => Date.now();
  key = (await t.key("acme", ["scrape"])).secret;
});
afterAll(async () => {
  await t?.close();
  await down?.close();
  await strict?.close();
});

describe("a start page kept out by robots.txt", () => {
  it("a site that refuses the connection: robots_unreachable, not robots_disallowed, and the crawl fails as unreachable, not refused", async () => {
    const job = await crawl(`http://127.0.0.1:${await closedPort()}/`);
    // The site refused nothing: it did not answer at all (robots-streak.test.ts).
    expect(job).toMatchObject({ status: "failed", stopped_reason: "site_unreachable" });
    expect(job.failures.map((f: { error: string }) => f.error)).toEqual(["robots_unreachable"]);
  });

  it("a robots.txt that answers 503: robots_unreachable", async () => {
    const job = await crawl(`${down.url}/`);
    expect(job).toMatchObject({ status: "failed", stopped_reason: "site_refused" }); // it answered
    expect(job.failures.map((f: { error: string }) => f.error)).toEqual(["robots_unreachable"]);
  });

  it("a robots.txt that disallows: still robots_disallowed", async () => {
    const job = await crawl(`${strict.url}/`);
    expect(job.failures.map((f: { error: string }) => f.error)).toEqual(["robots_disallowed"]);
  });
});
