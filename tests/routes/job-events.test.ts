/**
 * GET /v1/batch/scrape/{id}/events (and the crawl one) with a Last-Event-ID that is no page's
 * sequence number: the stream still carries the job's status. A value past the safe integers
 * (1e21) used to reach the store's OFFSET, fail there, and end the stream with no event at all;
 * and such a failure inside a stream went to stderr as bare text, with no event and no request id.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";

describe("job events with an odd Last-Event-ID", () => {
  let site: PageServer;
  let t: TestApp;
  let key: string;
  let id: string;
  beforeAll(async () => {
    site = await startPageServer();
    site.route("/a", send("text/html", "<html><body><article><h1>A</h1><p>Some words for a page that has content.</p></article></body></html>"));
    t = await makeApp({ storage: "sqlite", pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }), env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32" } });
    t.clock.now = () => Date.now();
    key = (await t.key("acme", ["scrape"])).secret;
    id = (await (await t.request("/v1/batch/scrape", { method: "POST", key, json: { urls: [`${site.url}/a`] } })).json()).id;
    // Waited for in the store, not over the API: polls are requests, and a slow machine's many would use up the key's per-minute limit.
    for (let i = 0; i < 400; i++) {
      const job = await t.ports.jobs!.store.get(id);
      if (job && ["completed", "failed", "cancelled"].includes(job.status)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  it("a failure inside the stream ends it with an error event and is logged under the request id", async () => {
    const store = t.ports.jobs!.store;
    const pages = store.pages;
    store.pages = async () => {
      throw new Error("the store failed");
    };
    try {
      const res = await t.request(`/v1/batch/scrape/${id}/events`, { key });
      const text = await res.text();
      const requestId = res.headers.get("x-request-id");
      expect(text).toMatch(/event: error\ndata: \{"error":\{"code":"internal_error"/);
      expect(text).toContain(`"request_id":"${requestId}"`);
      expect(text).not.toContain("the store failed");
      expect(t.logger.lines.some((l) => l.level === "error" && l.req_id === requestId && JSON.stringify(l).includes("the store failed"))).toBe(true);
    } finally {
      store.pages = pages;
    }
  });

  it.each(["abc", "-5", "1.5", "1e21", "99999999999999999999999"])("Last-Event-ID %s: every page again, then the final status", async (lastId) => {
    const res = await t.request(`/v1/batch/scrape/${id}/events`, { key, headers: { "last-event-id": lastId } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("event: page");
    expect(text).toMatch(/event: status\ndata: \{[^\n]*"status":"completed"/);
  });
});
