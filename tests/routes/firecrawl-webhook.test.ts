/**
 * Firecrawl's crawl and batch scrape take `webhook` as a URL or an object with one. Any other
 * value (a number, an object whose url is not a string) used to be dropped without a word: the
 * job started, answered success, and the caller waited for deliveries that never came. It is a
 * 400 naming the field now; event names Quarry does not send are named as not applied.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await makeApp({ env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32" } });
  key = (await t.key("acme", ["scrape"])).secret;
});
afterAll(async () => {
  await t?.close();
});

const start = (path: string, body: Record<string, unknown>) => t.request(`/compat/firecrawl${path}`, { method: "POST", key, json: body });
const BASES: Array<[string, Record<string, unknown>]> = [
  ["/v2/crawl", { url: "http://127.0.0.1:9/", limit: 1 }],
  ["/v1/crawl", { url: "http://127.0.0.1:9/", limit: 1 }],
  ["/v2/batch/scrape", { urls: ["http://127.0.0.1:9/"] }],
  ["/v1/batch/scrape", { urls: ["http://127.0.0.1:9/"] }],
];

describe("a Firecrawl webhook that cannot be delivered to", () => {
  it("is a 400 naming the field, in Firecrawl's shape, not a job started without it", async () => {
    const cases: Array<[unknown, string]> = [
      [5, "webhook: webhook must be a URL or an object {url, events?}"],
      [["http://127.0.0.1:9/hook"], "webhook: webhook must be a URL or an object {url, events?}"],
      [{ url: 5 }, "webhook.url: webhook.url must be a string"],
      [{ events: ["completed"] }, "webhook.url: webhook.url is required"],
    ];
    for (const [path, base] of BASES) {
      for (const [hook, message] of cases) {
        const res = await start(path, { ...base, webhook: hook });
        const body = await res.json();
        expect(res.status, `${path} ${JSON.stringify(hook)}`).toBe(400);
        expect(body).toMatchObject({ success: false, code: "invalid_request", error: message });
      }
    }
  });

  it("a good one starts the job; event names Quarry does not send are named as not applied", async () => {
    const res = await start("/v2/crawl", { ...BASES[0]![1], webhook: { url: "http://127.0.0.1:9/hook", events: ["completed", "crawl.page"] } });
    const body = await res.json();
    expect(res.status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.quarry.ignored.map((i: { option: string }) => i.option)).toEqual(["webhook.events.crawl.page"]);
    // A null webhook is no webhook, as the SDKs send it.
    expect((await start("/v2/batch/scrape", { ...BASES[2]![1], webhook: null })).status).toBe(200);
  });
});
