/**
 * GET /v1/usage/daily over real HTTP on a real `quarry serve` process, on each store: SQLite,
 * PostgreSQL alone, and PostgreSQL with Redis. Scrapes of a local page are the metered requests.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDatabase } from "../helpers/pg.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

const REDIS_URL = process.env.QUARRY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const stores = [
  { name: "SQLite", pg: false, redis: false },
  { name: "PostgreSQL", pg: true, redis: false },
  { name: "PostgreSQL + Redis", pg: true, redis: true },
];

describe.each(stores)("GET /v1/usage/daily over HTTP on $name", ({ pg, redis }) => {
  let site: PageServer;
  let server: Server;
  let db: { url: string; drop(): Promise<void> } | null = null;
  let env: Record<string, string>;
  const ids: string[] = [];

  beforeAll(async () => {
    site = await startPageServer();
    site.route("/page", send("text/html", "<html><head><title>t</title></head><body><article><p>A page for counting metered scrapes per day, long enough to be read as content by the extractor.</p></article></body></html>"));
    if (pg) db = await tempDatabase("daily");
    env = {
      QUARRY_IP_RATE: "off",
      QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
      ...(db ? { QUARRY_DATABASE_URL: db.url } : { QUARRY_DATA_DIR: tempDataDir() }),
      ...(redis ? { QUARRY_REDIS_URL: REDIS_URL } : {}),
    };
    server = await startServer("node", env);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await site?.close();
    if (redis && ids.length) {
      const r = new Redis(REDIS_URL);
      const keys = (await Promise.all(ids.map((id) => r.keys(`quarry:{${id}}:*`)))).flat();
      if (keys.length) await r.del(...keys);
      r.disconnect();
    }
    await db?.drop();
  });

  const call = (path: string, key: string, init: RequestInit = {}) =>
    fetch(server.url + path, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) } });
  const scrape = (key: string, url = `${site.url}/page`) =>
    call("/v1/scrape", key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url, formats: ["text"] }) });

  it("reports each key's answered scrapes on today's date, the keys it may manage side by side, and agrees with /v1/usage", async () => {
    const manager = createKeyCli(env, "acme", "scrape,keys");
    const lesser = createKeyCli(env, "acme", "scrape");
    const stronger = createKeyCli(env, "acme", "search,scrape,keys");
    ids.push(manager.id, lesser.id, stronger.id);
    const plan: Array<[{ key: string }, number]> = [[manager, 2], [lesser, 3], [stronger, 1]];
    for (const [k, n] of plan) for (let i = 0; i < n; i++) expect((await scrape(k.key)).status).toBe(200);
    // refused: a bad body and a private target count on no day
    expect((await call("/v1/scrape", lesser.key, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(400);
    expect((await scrape(lesser.key, "http://10.0.0.1/")).status).toBe(422);

    const today = new Date().toISOString().slice(0, 10);
    const r = await call("/v1/usage/daily", manager.key);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-request-id")).toMatch(/^req_/);
    const body = await r.json();
    expect(body.period).toBe(today.slice(0, 7));
    expect(body.days.at(-1)).toBe(today);
    expect(body.days).toHaveLength(Number(today.slice(8)));
    const byId = Object.fromEntries(body.keys.map((k: { id: string }) => [k.id, k]));
    expect(Object.keys(byId).sort()).toEqual([manager.id, lesser.id].sort()); // not the stronger key
    expect(byId[lesser.id].used).toBe(3);
    expect(byId[lesser.id].daily.at(-1)).toEqual({ date: today, used: 3, groups: { search: 0, video: 0, research: 0, social: 0, scrape: 3, crawl: 0 } });
    expect(body.key).toMatchObject({ id: manager.id, used: 2 });

    const own = await (await call("/v1/usage/daily", lesser.key)).json();
    expect(own.keys).toBeNull();
    expect(own.key.used).toBe(3);
    for (const k of [manager, lesser, stronger]) {
      const month = await (await call("/v1/usage", k.key)).json();
      const days = await (await call("/v1/usage/daily", k.key)).json();
      expect(days.key.used).toBe(month.used);
    }
    const top = await (await call("/v1/usage/daily", stronger.key)).json();
    expect(top.keys).toHaveLength(3);

    // Revoking a key does not hide what it cost this month: it follows the active keys, marked; an unused revoked key is left out.
    const unused = createKeyCli(env, "acme", "scrape");
    ids.push(unused.id);
    for (const k of [lesser, unused]) expect((await call(`/v1/keys/${k.id}`, manager.key, { method: "DELETE" })).status).toBe(200);
    const after = await (await call("/v1/usage/daily", manager.key)).json();
    expect(after.keys.map((k: { id: string; revoked_at: string | null }) => [k.id, k.revoked_at !== null])).toEqual([[manager.id, false], [lesser.id, true]]);
    expect(after.keys[1]).toMatchObject({ used: 3, revoked_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
    expect(after.keys.reduce((n: number, k: { used: number }) => n + k.used, 0)).toBe(5);
  }, 60_000);

  it("keeps the days across a restart", async () => {
    const k = createKeyCli(env, "restart", "scrape");
    ids.push(k.id);
    expect((await scrape(k.key)).status).toBe(200);
    await server.stop();
    server = await startServer("node", env);
    const body = await (await call("/v1/usage/daily", k.key)).json();
    expect(body.key.used).toBe(1);
    expect(body.key.daily.at(-1).groups.scrape).toBe(1);
  }, 60_000);
});
