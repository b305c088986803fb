/**
 * A scrape that gives the caller nothing is not charged: a 422 `unsupported_content` (an image,
 * a binary file) or `action_failed` (an action the page could not do) used to count a unit of
 * the month's quota, although a crawl's or batch's page failing for the same reasons costs
 * nothing and the README names only refusals and 5xx as free. A real `quarry serve`, a local
 * site, the real browser for the action.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

const CHROMIUM = "/usr/bin/chromium";

describe("failed scrapes cost nothing", () => {
  let site: PageServer;
  let server: Server;
  let key: string;

  beforeAll(async () => {
    site = await startPageServer();
    site.route("/page", send("text/html", "<html><head><title>t</title></head><body><article><p>A plain page with enough words to be read as the main content of an article.</p></article></body></html>"));
    site.route("/logo.png", send("image/png", Buffer.from("89504e470d0a1a0a0000000d49484452", "hex")));
    site.route("/data.bin", send("application/octet-stream", Buffer.from([0, 1, 2, 3, 255])));
    const env = {
      QUARRY_DATA_DIR: tempDataDir(),
      QUARRY_IP_RATE: "off",
      QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
      ...(existsSync(CHROMIUM) ? { QUARRY_CHROMIUM_PATH: CHROMIUM } : {}),
    };
    server = await startServer("node", env);
    key = createKeyCli(env, "acme", "scrape").key;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await site?.close();
  });

  const scrape = async (body: Record<string, unknown>) => {
    const res = await fetch(`${server.url}/v1/scrape`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, remaining: res.headers.get("x-ratelimit-remaining"), body: await res.json() };
  };
  const usage = async () => (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json();

  it("an image or a binary file answers 422 unsupported_content and leaves the quota as it was", async () => {
    expect((await scrape({ url: `${site.url}/page` })).status).toBe(200);
    for (const path of ["/logo.png", "/data.bin"]) {
      const r = await scrape({ url: `${site.url}${path}` });
      expect([r.status, r.body.error.code], path).toEqual([422, "unsupported_content"]);
      expect(r.remaining, path).toBe("999");
    }
    expect(await usage()).toMatchObject({ used: 1, remaining: 999, endpoints: { scrape: 1 } });
  });

  it.skipIf(!existsSync(CHROMIUM))("an action that fails answers 422 action_failed and leaves the quota as it was", async () => {
    const before = (await usage()).used;
    const r = await scrape({ url: `${site.url}/page`, actions: [{ type: "press", key: "NoSuchKeyName" }] });
    expect([r.status, r.body.error.code]).toEqual([422, "action_failed"]);
    expect((await usage()).used).toBe(before);
    // The same page with an action that works is charged as usual.
    expect((await scrape({ url: `${site.url}/page`, actions: [{ type: "press", key: "End" }] })).status).toBe(200);
    expect((await usage()).used).toBe(before + 1);
  }, 60_000);
});
