/**
 * Firecrawl's changeTracking format through the real Firecrawl SDK (v2 format object, v1
 * changeTrackingOptions) against a real Quarry server: new, then same, then changed with a git diff,
 * each compared with this account's own earlier read under the same tag.
 */
import Firecrawl, { FirecrawlAppV1, type FormatOption } from "@mendable/firecrawl-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "../helpers/page-server.ts";
import { ARTICLE_PAGE, startHarness, type Harness } from "./harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.site.route("/tracked", send("text/html; charset=utf-8", ARTICLE_PAGE));
}, 60_000);
afterAll(() => h?.close());

describe("Firecrawl changeTracking with the real SDK", () => {
  it("v2: new, then same, then changed with a git diff of the markdown", async () => {
    const fc = new Firecrawl({ apiKey: h.keys.full, apiUrl: `${h.url}/compat/firecrawl`, maxRetries: 1 });
    const url = `${h.site.url}/tracked`;
    const formats: FormatOption[] = ["markdown", { type: "changeTracking", modes: ["git-diff"], tag: "sdk" }];
    const first = await fc.scrape(url, { formats });
    expect(first.changeTracking).toMatchObject({ changeStatus: "new", previousScrapeAt: null, visibility: "visible" });
    const second = await fc.scrape(url, { formats });
    expect(second.changeTracking).toMatchObject({ changeStatus: "same", visibility: "visible" });
    expect(typeof second.changeTracking!.previousScrapeAt).toBe("string");
    h.site.route("/tracked", send("text/html; charset=utf-8", ARTICLE_PAGE.replace("which is called compaction", "which engineers call compaction")));
    const third = await fc.scrape(url, { formats });
    expect(third.changeTracking).toMatchObject({ changeStatus: "changed" });
    expect((third.changeTracking!.diff as { text: string }).text).toMatch(/^-.*which is called compaction/m);
    expect((third.changeTracking!.diff as { text: string }).text).toMatch(/^\+.*which engineers call compaction/m);
    // Another tag is its own series.
    const other = await fc.scrape(url, { formats: ["markdown", { type: "changeTracking", modes: [], tag: "elsewhere" }] });
    expect(other.changeTracking).toMatchObject({ changeStatus: "new" });
  });

  it("v1: changeTrackingOptions map onto the same series", async () => {
    const app = new FirecrawlAppV1({ apiKey: h.keys.full, apiUrl: `${h.url}/compat/firecrawl` });
    const res = await app.scrapeUrl(`${h.site.url}/tracked`, { formats: ["markdown", "changeTracking"], changeTrackingOptions: { tag: "sdk", modes: ["git-diff"] } });
    expect(res.success).toBe(true);
    expect((res as { changeTracking?: { changeStatus: string } }).changeTracking).toMatchObject({ changeStatus: "same" });
  });
});
