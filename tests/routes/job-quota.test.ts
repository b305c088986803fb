/**
 * The spec's quota_exceeded: "Message states the reset time and suggests upgrading." Starting a
 * crawl or batch scrape with the quota spent is refused by the job's own check (its pages are
 * metered one by one, not the request), and it must say the same as the gateway does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeApp, type TestApp } from "../helpers/app.ts";

describe("starting a job with the quota spent", () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await makeApp({ env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: '{"spent":{"quota":0,"per_minute":100}}' } });
    key = (await t.key("acme", ["scrape"], "spent")).secret;
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    ["/v1/crawl", { url: "http://127.0.0.1:9/" }],
    ["/v1/batch/scrape", { urls: ["http://127.0.0.1:9/"] }],
  ])("POST %s: 429 quota_exceeded naming the reset time and the upgrade", async (path, json) => {
    const res = await t.request(path, { method: "POST", key, json });
    expect(res.status).toBe(429);
    const err = (await res.json()).error;
    expect(err.code).toBe("quota_exceeded");
    expect(err.message).toContain(res.headers.get("x-ratelimit-reset"));
    expect(err.message).toMatch(/resets at \d{4}-\d\d-01T00:00:00Z/);
    expect(err.message).toMatch(/upgrade/i);
    expect(err).not.toHaveProperty("retry_after");
  });
});
