/**
 * Issue #17 over real HTTP against a real `quarry serve` process: the response cache once
 * answered one request with another's result, because unstorage cut its keys at `?`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPageServer, type PageServer } from "../helpers/page-server.ts";
import { replayEnv, startReplayServer, type ReplayServer } from "../helpers/replay-server.ts";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

describe("the cache answers a request only with its own result (real server)", () => {
  let s: Server;
  let site: PageServer;
  let replay: ReplayServer;
  let key: string;
  const post = (path: string, json: unknown) =>
    fetch(s.url + path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(json) });

  beforeAll(async () => {
    site = await startPageServer();
    // One path, the item chosen by the query string, as on countless real sites.
    site.route("/item", (req, res) => {
      const id = new URL(req.url ?? "/", "http://x").searchParams.get("id") ?? "none";
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(
        `<html><head><title>Item ${id}</title></head><body><article><h1>Item ${id}</h1>` +
          `<p>This is the page of item number ${id}. It describes item ${id} at length, with enough words to be read as the main content of the page.</p></article></body></html>`,
      );
    });
    replay = await startReplayServer();
    const env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_IP_RATE: "off", QUARRY_EGRESS_ALLOW: "127.0.0.1/32", ...replayEnv(replay.url) };
    key = createKeyCli(env, "cache", "search,scrape", "pro").key;
    s = await startServer("node", env);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await site?.close();
    await replay?.close();
  });

  it("scrapes of one path with different query strings each get their own page", async () => {
    const one = await (await post("/v1/scrape", { url: `${site.url}/item?id=1`, formats: ["text"] })).json();
    const two = await (await post("/v1/scrape", { url: `${site.url}/item?id=2`, formats: ["text"] })).json();
    expect(one.data.title).toBe("Item 1");
    expect(two.data.title).toBe("Item 2");
    expect(two.data.text).toContain("item number 2");
    expect(two.meta).toMatchObject({ url: `${site.url}/item?id=2`, cached: false });
    expect(site.hits.filter((h) => h.startsWith("/item")).length).toBe(2);
    // and the cache still works for the very same request
    const again = await (await post("/v1/scrape", { url: `${site.url}/item?id=1`, formats: ["text"] })).json();
    expect(again.meta.cached).toBe(true);
    expect(again.data.title).toBe("Item 1");
  });

  it("searches whose queries hold a `?` each get their own answer", async () => {
    const first = await (await post("/v1/search", { query: "tagged? first", max_results: 5, backends: ["duckduckgo"] })).json();
    const second = await (await post("/v1/search", { query: "tagged? second", max_results: 3, backends: ["duckduckgo"] })).json();
    expect(first.meta).toMatchObject({ query: "tagged? first", cached: false });
    expect(second.meta).toMatchObject({ query: "tagged? second", cached: false });
    expect(second.results.length).toBeLessThanOrEqual(3);
    expect(first.results.length).toBeGreaterThan(3);
    const again = await (await post("/v1/search", { query: "tagged? first", max_results: 5, backends: ["duckduckgo"] })).json();
    expect(again.meta).toMatchObject({ query: "tagged? first", cached: true });
  });
});
