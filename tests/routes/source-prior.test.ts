/**
 * Issue #17's second bug over the API: fetch history is recorded under the raw hostname
 * (`www.good.test`) while ranking asks for the bare host (`good.test`), so the prior of every
 * `www.` site stayed at its default. Here scrapes build the history of two `www.` sites (names
 * the test resolver maps to the local page server), and a search then ranks them by it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { replayEnv, startReplayServer, type ReplayServer } from "../helpers/replay-server.ts";
import { mapResolver } from "../fetch/helpers.ts";

describe("the source prior reaches www. sites", () => {
  let site: PageServer;
  let replay: ReplayServer;
  let t: TestApp;
  let key: string;
  const post = (path: string, json: unknown) => t.request(path, { method: "POST", key, json });

  beforeAll(async () => {
    site = await startPageServer();
    site.route("/page", send("text/html", "<html><body><article><h1>A page</h1><p>Plenty of readable words about blue tack and where to buy it, for the extractor to keep as main content.</p></article></body></html>"));
    replay = await startReplayServer();
    const pages = createSafeFetch({
      allow: parseAllowList(["127.0.0.1/32"]),
      resolver: mapResolver({ "www.good.test": ["127.0.0.1"], "www.bad.test": ["127.0.0.1"] }),
    });
    t = await makeApp({ storage: "sqlite", env: replayEnv(replay.url), pages });
    t.clock.now = () => Date.now();
    key = (await t.key("prior", ["search", "scrape"], "pro")).secret;
  });
  afterAll(async () => {
    await t?.close();
    await site?.close();
    await replay?.close();
  });

  it("fetch history of www.good.test and www.bad.test ranks good above bad", async () => {
    const port = new URL(site.url).port;
    for (let i = 0; i < 4; i++) {
      expect((await post("/v1/scrape", { url: `http://www.good.test:${port}/page?n=${i}` })).status).toBe(200);
      expect((await post("/v1/scrape", { url: `http://www.bad.test:${port}/missing?n=${i}` })).status).toBe(200); // a 404 is data now, and counts as a failed fetch for the host
    }
    // The engine puts the failing site first; with equal text, only the prior can reorder them.
    const hit = (host: string, n: number) => ({
      url: `https://${host}/blue-tack`, title: "Blue tack", content: "Where to buy blue tack", engine: "bing", engines: ["bing"], positions: [n], score: 1, category: "general",
    });
    replay.bodies.searxng = JSON.stringify({
      query: "blue tack", results: [hit("www.bad.test", 1), hit("www.good.test", 2)],
      number_of_results: 2, answers: [], corrections: [], infoboxes: [], suggestions: [], unresponsive_engines: [],
    });
    const res = await post("/v1/search", { query: "blue tack", backends: ["searxng"] });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.results.map((r: { url: string }) => new URL(r.url).hostname)).toEqual(["www.good.test", "www.bad.test"]);
    const [good, bad] = body.results;
    expect(good.score).toBeGreaterThan(bad.score);
  });
});
