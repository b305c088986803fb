/**
 * A wait_for in milliseconds at or past timeout_ms can only end in a timeout, after waiting all
 * of it: `{wait_for: 20000}` with the default 15 s answered, 15 s later, "Fetching <url> took
 * longer than 15000 ms". It is a 400 naming both fields at once, on scrape, crawl and batch
 * scrape; Firecrawl's waitFor without a timeout gets a timeout that fits it, and one past half of
 * the timeout given is refused, as Firecrawl refuses it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as v from "valibot";
import { ScrapeOptions, toNativeScrape } from "../../core/compat/firecrawl/scrape.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await makeApp();
  key = (await t.key("acme", ["scrape"])).secret;
});
afterAll(async () => {
  await t?.close();
});

const post = async (path: string, json: Record<string, unknown>) => {
  const res = await t.request(path, { method: "POST", key, json });
  return { status: res.status, body: await res.json() };
};

describe("wait_for that timeout_ms leaves no time for", () => {
  it.each([
    ["/v1/scrape", { url: "https://example.org/" }],
    ["/v1/crawl", { url: "https://example.org/" }],
    ["/v1/batch/scrape", { urls: ["https://example.org/"] }],
  ])("%s: a 400 at once naming wait_for and timeout_ms", async (path, base) => {
    const started = Date.now();
    const dflt = await post(path, { ...base, wait_for: 20_000 });
    expect(dflt.status).toBe(400);
    expect(dflt.body.error.message).toBe("wait_for: wait_for (20000 ms) must be shorter than timeout_ms (15000 ms), which also covers loading the page: raise timeout_ms (up to 60000) or wait less.");
    expect(dflt.body.error.details[0].field).toBe("wait_for");
    const equal = await post(path, { ...base, wait_for: 5000, timeout_ms: 5000 });
    expect(equal.status).toBe(400);
    expect(Date.now() - started).toBeLessThan(5000);
    const used = await (await t.request("/v1/usage", { key })).json();
    expect(used.used).toBe(0);
  });

  it("Firecrawl's waitFor: a timeout that fits when none is given, a 400 when it is past half of the given one, as Firecrawl answers", () => {
    const plan = (o: unknown) => toNativeScrape("https://example.org/", v.parse(ScrapeOptions, o), [], true);
    expect(plan({ waitFor: 20_000 }).native).toMatchObject({ wait_for: 20_000, timeout_ms: 35_000 });
    expect(plan({ waitFor: 100 }).native).toMatchObject({ wait_for: 100, timeout_ms: 15_100 });
    // Firecrawl's own rule: waitFor at most half of timeout (6000 of 10000 fits Quarry's, not Firecrawl's).
    expect(() => plan({ waitFor: 6000, timeout: 10_000 })).toThrow("waitFor: waitFor (6000 ms) must not exceed half of timeout (10000 ms), which also covers loading the page");
    expect(plan({ waitFor: 5000, timeout: 10_000 }).native).toMatchObject({ wait_for: 5000, timeout_ms: 10_000 });
  });
});
