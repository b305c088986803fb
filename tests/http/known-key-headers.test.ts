/**
 * The X-RateLimit-* headers of a request refused after its key was recognised (a missing scope,
 * a bad body, an unknown query parameter) describe that key's own plan and what it has left, as
 * they do on its answered requests: a real `quarry serve` on SQLite, keys made with the CLI.
 * Only a request whose key is not known (none, malformed, revoked) gets the lowest plan's full
 * allowance (api.md §3).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { cli, createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

describe("rate-limit headers of a known key's refused requests", () => {
  let site: PageServer;
  let server: Server;
  let env: Record<string, string>;

  beforeAll(async () => {
    site = await startPageServer();
    site.route("/page", send("text/html", "<html><head><title>t</title></head><body><article><p>A page to spend a little of a key's monthly quota on, long enough to be read as content.</p></article></body></html>"));
    env = {
      QUARRY_DATA_DIR: tempDataDir(),
      QUARRY_IP_RATE: "off",
      QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
      QUARRY_PLANS: JSON.stringify({ free: { quota: 7, per_minute: 50 }, starter: { quota: 40, per_minute: 50 } }),
    };
    server = await startServer("node", env);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await site?.close();
  });

  const call = (path: string, key: string | null, init: RequestInit = {}) =>
    fetch(server.url + path, { ...init, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(init.headers as Record<string, string>) } });
  const json = { "content-type": "application/json" };
  const scrape = (key: string, body: unknown = { url: `${site.url}/page`, formats: ["text"] }, headers: Record<string, string> = json) =>
    call("/v1/scrape", key, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
  const limits = (res: Response) => ({
    limit: res.headers.get("x-ratelimit-limit"),
    remaining: res.headers.get("x-ratelimit-remaining"),
    reset: res.headers.get("x-ratelimit-reset"),
  });

  it("a starter key that has spent 2 units: its 403, 400 and 415 say 40 and 38, as its usage does", async () => {
    const scraper = createKeyCli(env, "starter-co", "scrape", "starter");
    const searcher = createKeyCli(env, "starter-co", "search");
    for (let i = 0; i < 2; i++) expect((await scrape(scraper.key)).status).toBe(200);
    const usage = await call("/v1/usage", scraper.key);
    expect(await usage.json()).toMatchObject({ plan: "starter", quota: 40, used: 2, remaining: 38 });
    const own = limits(usage);
    expect(own).toMatchObject({ limit: "40", remaining: "38" });

    const refusals: Array<[string, Response]> = [
      ["insufficient_scope", await scrape(searcher.key)],
      ["insufficient_scope", await call("/v1/keys", scraper.key)],
      ["invalid_request", await scrape(scraper.key, { url: `${site.url}/page`, formatz: ["text"] })],
      ["invalid_request", await call("/v1/usage?limt=5", scraper.key)],
      ["unsupported_media_type", await scrape(scraper.key, "url=x", { "content-type": "text/plain" })],
    ];
    for (const [code, res] of refusals) {
      expect((await res.json()).error.code).toBe(code);
      // The search key has used nothing; the scrape key has 38 left. Both are on starter (40).
      const expected = res === refusals[0][1] ? { limit: "40", remaining: "40" } : { limit: "40", remaining: "38" };
      expect(limits(res), code).toEqual({ ...expected, reset: own.reset });
    }
    // None of them was charged.
    expect(await (await call("/v1/usage", scraper.key)).json()).toMatchObject({ used: 2, remaining: 38 });
  });

  it("an enterprise key's refused request says unlimited; an unknown or revoked key gets the free plan's full allowance", async () => {
    const big = createKeyCli(env, "big-co", "search", "enterprise");
    const res = await scrape(big.key);
    expect(res.status).toBe(403);
    expect(limits(res)).toMatchObject({ limit: "unlimited", remaining: "unlimited" });

    const gone = createKeyCli(env, "big-co", "scrape");
    expect((await scrape(gone.key)).status).toBe(200);
    expect(cli(["keys", "revoke", gone.id], env).status).toBe(0);
    for (const r of [await scrape(gone.key), await call("/v1/usage", null)]) {
      expect(r.status).toBe(401);
      expect(limits(r)).toMatchObject({ limit: "7", remaining: "7" });
    }
  });
});
