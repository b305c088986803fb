/**
 * Several `quarry serve` processes behind no balancer but the test's own round robin, sharing
 * a private PostgreSQL (and, in one run, a private Redis): they must behave as one service, their
 * collections too (api.md §11).
 */
import pgLib from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { PrivatePostgres, PrivateRedis } from "../helpers/private-services.ts";
import { cli, createKeyCli, startServer, type Server } from "../helpers/server.ts";

const modes = [
  { name: "PostgreSQL alone", redis: false },
  { name: "PostgreSQL + Redis", redis: true },
];

describe.each(modes)("three instances on $name", ({ redis: withRedis }) => {
  let pg: PrivatePostgres;
  let redis: PrivateRedis | null = null;
  let env: Record<string, string>;
  let servers: Server[] = [];
  let admin: { id: string; key: string };
  let site: PageServer;

  beforeAll(async () => {
    site = await startPageServer();
    site.route("/slow", (_req, res) => setTimeout(() => res.writeHead(200, { "content-type": "text/html" }).end("<p>late</p>"), 5_000));
    site.route("/page", send("text/html", "<html><head><title>t</title></head><body><article><p>A small page that scrape reads for the metered requests of this suite, long enough to be content.</p></article></body></html>"));
    pg = await PrivatePostgres.start();
    if (withRedis) redis = await PrivateRedis.start();
    env = {
      QUARRY_DATABASE_URL: pg.url,
      ...(redis ? { QUARRY_REDIS_URL: redis.url } : {}),
      QUARRY_IP_RATE: "off",
      QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
      QUARRY_PLANS: '{"free":{"per_minute":50},"starter":{"quota":20,"per_minute":1000},"pro":{"per_minute":30}}',
      QUARRY_LOG_LEVEL: "info",
    };
    // All three start at once: migrations must take turns by themselves.
    servers = await Promise.all([0, 1, 2].map(() => startServer("node", env)));
    admin = createKeyCli(env, "acme", "search,keys");
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await site?.close();
    await redis?.down();
    try {
      pg?.down();
    } catch {
      // already down
    }
  });

  const call = (i: number, path: string, key: string, init: RequestInit = {}) =>
    fetch(servers[i % servers.length].url + path, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) } });

  it("600 concurrent requests spread over the three admit exactly 50 on a per-minute limit of 50", async () => {
    const k = createKeyCli(env, `burst-${withRedis}`, "search");
    // Each answer is read to its end and the client gets a moment to take the connections back into its pool
    // (undici frees one a turn after its answer): otherwise the next case's 300 requests open new connections
    // beside up to 200 held ones per instance, and the server's cap of 256 per address answers 429.
    const res = await Promise.all(Array.from({ length: 600 }, (_, i) => call(i, "/v1/usage", k.key).then(async (r) => (await r.arrayBuffer(), r.status))));
    await new Promise((r) => setTimeout(r, 50));
    expect(res.filter((s) => s === 200)).toHaveLength(50);
    expect(res.filter((s) => s === 429)).toHaveLength(550);
  }, 60_000);

  const scrape = (i: number, key: string) =>
    call(i, "/v1/scrape", key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: `${site.url}/page`, formats: ["text"] }) });

  it("a monthly quota of 20 admits exactly 20 across the three", async () => {
    const k = createKeyCli(env, `quota-${withRedis}`, "scrape", "starter");
    const res = await Promise.all(Array.from({ length: 300 }, (_, i) => scrape(i, k.key).then(async (r) => ({ status: r.status, code: r.status === 200 ? null : (await r.json()).error.code }))));
    expect(res.filter((r) => r.status === 200)).toHaveLength(20);
    expect(res.filter((r) => r.code === "quota_exceeded"), JSON.stringify(res.filter((r) => r.status !== 200 && r.code !== "quota_exceeded").slice(0, 3))).toHaveLength(280);
    for (const i of [0, 1, 2]) expect((await (await call(i, "/v1/usage", k.key)).json()).used).toBe(20);
  }, 60_000);

  it("an instance killed with SIGKILL under load loses no answered use and counts little else", async () => {
    const k = createKeyCli(env, `kill-${withRedis}`, "scrape", "enterprise");
    let ok = 0;
    let inFlightOnVictim = 0;
    let maxInFlightOnVictim = 0;
    let stop = false;
    const worker = async (w: number) => {
      for (let i = w; !stop; i += 8) {
        const onVictim = i % 3 === 2;
        if (onVictim) maxInFlightOnVictim = Math.max(maxInFlightOnVictim, ++inFlightOnVictim);
        const r = await scrape(i, k.key).catch(() => null);
        if (onVictim) inFlightOnVictim--;
        if (r?.status === 200) ok++;
        await r?.arrayBuffer().catch(() => {});
        if (!r && onVictim) await new Promise((res) => setTimeout(res, 20));
      }
    };
    const workers = Array.from({ length: 8 }, (_, w) => worker(w));
    // Under load long enough to mean something: 1.5 s, and at least 21 answers (a loaded CI machine
    // answers fewer per second; the kill must still land among requests in flight).
    const loadStart = Date.now();
    while (Date.now() - loadStart < 1500 || (ok <= 20 && Date.now() - loadStart < 30_000)) await new Promise((r) => setTimeout(r, 100));
    const victim = servers[2];
    await victim.stop("SIGKILL");
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
    await Promise.all(workers);
    const used = (await (await call(0, "/v1/usage", k.key)).json()).used;
    // Units are committed when the answer is ready and the dead instance's leases expire. What can
    // remain is a commit whose answer died with the instance (the commit is a round trip, so it is
    // not atomic with sending): never more than the requests the instance had in flight.
    expect(ok).toBeGreaterThan(20);
    expect(used).toBeGreaterThanOrEqual(ok);
    expect(used - ok).toBeLessThanOrEqual(maxInFlightOnVictim);
    servers[2] = await startServer("node", env);
  }, 90_000);

  it("answers held up in their commit when their instance is killed are not counted before PostgreSQL has them", async () => {
    // #19: with Redis, a SIGKILL under load counted units whose answers never left: Redis counted
    // them before the write-through to PostgreSQL (which batches, so many answers wait in it).
    // A lock on quarry_usage holds every commit at that point, deterministically.
    const k = createKeyCli(env, `held-${withRedis}`, "scrape", "enterprise");
    const locker = new pgLib.Client({ connectionString: pg.url });
    await locker.connect();
    let inFlight: Promise<Response | null>[] = [];
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE quarry_usage IN EXCLUSIVE MODE");
      inFlight = [2, 5, 8, 11].map((i) => scrape(i, k.key).catch(() => null));
      const waiting = async () => Number((await locker.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")).rows[0].count);
      for (let i = 0; i < 100 && (await waiting()) < (withRedis ? 1 : 4); i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300)); // every answer is ready and waiting on its commit
      await servers[2].stop("SIGKILL");
      expect((await Promise.all(inFlight)).every((r) => r === null)).toBe(true);
      // Nothing reached a client, and nothing may be counted while the lock still holds them.
      const during = await (await call(0, "/v1/usage", k.key)).json();
      expect(during.used).toBe(0);
    } finally {
      await locker.query("ROLLBACK").catch(() => {});
      await locker.end();
    }
    // A statement PostgreSQL already had may still complete (as with PostgreSQL alone): at most the 4 in flight.
    await new Promise((r) => setTimeout(r, 300));
    const after = await (await call(1, "/v1/usage", k.key)).json();
    expect(after.used).toBeLessThanOrEqual(4);
    servers[2] = await startServer("node", env);
  }, 60_000);

  it("requests still being worked on when their instance is killed are never counted (their leases expire)", async () => {
    const k = createKeyCli(env, `lease-${withRedis}`, "scrape", "enterprise");
    const slow = (i: number) =>
      call(i, "/v1/scrape", k.key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: `${site.url}/slow`, formats: ["text"] }) }).catch(() => null);
    const inFlight = [slow(2), slow(2), slow(2), slow(2)];
    await new Promise((r) => setTimeout(r, 700)); // admitted, and waiting on the slow page
    await servers[2].stop("SIGKILL");
    expect((await Promise.all(inFlight)).every((r) => r === null)).toBe(true);
    expect((await (await call(0, "/v1/usage", k.key)).json()).used).toBe(0);
    const done = await call(1, "/v1/scrape", k.key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: `${site.url}/page`, formats: ["text"] }) });
    expect(done.status).toBe(200);
    expect((await (await call(0, "/v1/usage", k.key)).json()).used).toBe(1);
    servers[2] = await startServer("node", env);
  }, 60_000);

  it("a key revoked through instance 1 fails with 401 invalid_key on its next request to instances 2 and 3", async () => {
    const created = await (await call(0, "/v1/keys", admin.key, { method: "POST", headers: { "content-type": "application/json" }, body: '{"name":"victim","scopes":["search"]}' })).json();
    for (const i of [1, 2]) expect((await call(i, "/v1/usage", created.key)).status).toBe(200); // now cached there
    expect((await call(0, `/v1/keys/${created.id}`, admin.key, { method: "DELETE" })).status).toBe(200);
    for (const i of [1, 2]) {
      const r = await call(i, "/v1/usage", created.key);
      expect(r.status).toBe(401);
      expect((await r.json()).error.code).toBe("invalid_key");
    }
  });

  it("a plan change through the CLI applies on every instance at once", async () => {
    const k = createKeyCli(env, `plans-${withRedis}`, "search");
    for (const i of [0, 1, 2]) expect((await (await call(i, "/v1/usage", k.key)).json()).plan).toBe("free");
    const set = cli(["accounts", "set-plan", `plans-${withRedis}`, "pro"], env);
    expect(set.status, set.stderr).toBe(0);
    for (const i of [0, 1, 2]) expect((await (await call(i, "/v1/usage", k.key)).json()).plan).toBe("pro");
  });

  it("collections act as one across the instances: made on one, filled by a crawl and by documents, searched and researched on each; another account's is a 404", async () => {
    const page = (title: string, text: string, links: string[] = []) =>
      `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main><article><h1>${title}</h1><p>${text}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</article></main></body></html>`;
    site.route("/manual/", send("text/html", page("Harbour manual", "The harbour manual describes the port's daily operation for pilots and crews.", ["/manual/tides", "/manual/berths"])));
    site.route("/manual/tides", send("text/html", page("Tides", "Ships may enter the harbour two hours either side of high tide; the pilot checks the tide gauge before every entry.")));
    site.route("/manual/berths", send("text/html", page("Berths", "Berth four takes the largest container vessels and has its own shore power connection.")));
    const k = createKeyCli(env, `coll-${withRedis}`, "scrape,search,research");
    const post = (i: number, path: string, body: unknown, key = k.key) =>
      call(i, path, key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await post(0, "/v1/collections", { name: "harbour" })).status).toBe(201);
    expect((await post(2, "/v1/collections", { name: "harbour" })).status).toBe(409);
    const started = await (await post(1, "/v1/crawl", { url: `${site.url}/manual/`, collection: "harbour", max_depth: 1, limit: 10, sitemap: "skip" })).json();
    expect(started.id, JSON.stringify(started)).toBeTruthy();
    let job: Record<string, any> = {};
    for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      job = await (await call(2, `/v1/crawl/${started.id}`, k.key)).json();
      if (["completed", "failed", "cancelled"].includes(job.status)) break;
    }
    expect(job.status).toBe("completed");
    expect(job.completed).toBe(3);
    const added = await post(2, "/v1/collections/harbour/documents", { documents: [{ id: "memo", title: "Storm memo", text: "During a storm warning no ship leaves the harbour before the harbour master allows it." }] });
    expect(added.status).toBe(200);
    for (const i of [0, 1, 2]) {
      const info = await (await call(i, "/v1/collections/harbour", k.key)).json();
      expect(info).toMatchObject({ name: "harbour", documents: 4 });
      const found = await (await post(i, "/v1/collections/harbour/search", { query: "when can ships enter at high tide" })).json();
      expect(found.results[0].url, JSON.stringify(found)).toBe(`${site.url}/manual/tides`);
      expect(found.results[0].passages[0].text).toMatch(/two hours either side of high tide/);
      const storm = await (await post(i, "/v1/collections/harbour/search", { query: "storm warning" })).json();
      expect(storm.results?.[0]?.id, JSON.stringify(storm)).toBe("memo");
    }
    const searched = await (await post(1, "/v1/search", { query: "largest container vessels berth", collections: ["harbour"], web: false })).json();
    expect(Object.keys(searched.meta.backends)).toEqual(["collection:harbour"]);
    expect(searched.results[0].url).toBe(`${site.url}/manual/berths`);
    const researched = await post(0, "/v1/research", { query: "When may ships enter the harbour?", collections: ["harbour"], web: false });
    const report = await researched.json();
    expect(researched.status, JSON.stringify(report)).toBe(200);
    expect(report.sources.length).toBeGreaterThan(0);
    // Only the collection's documents: its crawled pages, and the memo (no URL) by its citation.
    for (const src of report.sources) expect(src.url.startsWith(`${site.url}/manual/`) || src.url === "quarry://collections/harbour/documents/memo", src.url).toBe(true);
    expect(report.report.findings.map((f: { text: string }) => f.text).join(" ")).toMatch(/high tide/);
    const other = createKeyCli(env, `coll-other-${withRedis}`, "scrape,search,research");
    for (const i of [0, 1, 2]) expect((await call(i, "/v1/collections/harbour", other.key)).status).toBe(404);
    expect((await post(1, "/v1/collections/harbour/search", { query: "tide" }, other.key)).status).toBe(404);
    expect((await post(2, "/v1/research", { query: "tide", collections: ["harbour"], web: false }, other.key)).status).toBe(404);
    expect((await call(0, "/v1/collections/harbour", k.key, { method: "DELETE" })).status).toBe(200);
    for (const i of [1, 2]) expect((await call(i, "/v1/collections/harbour", k.key)).status).toBe(404);
  }, 90_000);

  it("outages under light load: correct errors during, full service after, nothing over-admitted", async () => {
    const k = createKeyCli(env, `outage-${withRedis}`, "search", "pro"); // 30 per minute
    const admitted: number[] = [];
    const statuses: number[] = [];
    let stop = false;
    let n = 0;
    const load = (async () => {
      while (!stop) {
        const r = await call(n++, "/v1/usage", k.key).catch(() => null);
        const s = r?.status ?? 0;
        statuses.push(s);
        if (s === 200) admitted.push(Date.now());
        await new Promise((res) => setTimeout(res, 60));
      }
    })();
    const waitFor = async (pred: () => Promise<boolean>, ms = 20_000) => {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        if (await pred().catch(() => false)) return true;
        await new Promise((r) => setTimeout(r, 200));
      }
      return false;
    };
    const healthOf = async (i: number) => (await fetch(`${servers[i].url}/health`)).json();

    await new Promise((r) => setTimeout(r, 500));
    if (redis) {
      await redis.down();
      expect(await waitFor(async () => (await call(1, "/v1/usage", admin.key)).status === 503)).toBe(true);
      const down = await call(2, "/v1/usage", admin.key);
      expect((await down.json()).error.code).toBe("service_unavailable");
      // No request can be admitted without the counts: /health says so, for a load balancer to act on.
      const health = await fetch(`${servers[0].url}/health`);
      expect(health.status).toBe(503);
      const record = await health.json();
      expect(record.status).toBe("unavailable");
      expect(record.services.limits).toMatchObject({ status: "unreachable", store: "redis" });
      expect(record.services.database.status).toBe("ok");
      await redis.up();
      expect(await waitFor(async () => (await call(1, "/v1/usage", admin.key)).status !== 503)).toBe(true);
      expect(await waitFor(async () => (await fetch(`${servers[0].url}/health`)).status === 200)).toBe(true);
    }
    pg.down();
    expect(await waitFor(async () => (await fetch(`${servers[0].url}/health`)).status === 503)).toBe(true);
    expect((await healthOf(2)).status).toBe("unavailable");
    const refused = await call(1, "/v1/usage", admin.key);
    expect(refused.status).toBe(503);
    expect((await refused.json()).error.code).toBe("service_unavailable");
    pg.up();
    expect(await waitFor(async () => (await fetch(`${servers[2].url}/health`)).status === 200)).toBe(true);
    expect(await waitFor(async () => [0, 1, 2].every(() => true) && (await call(0, "/v1/usage", admin.key)).status !== 503)).toBe(true);
    for (const i of [0, 1, 2]) expect([200, 429]).toContain((await call(i, "/v1/usage", admin.key)).status);

    stop = true;
    await load;
    expect(statuses.includes(500)).toBe(false);
    // No rolling minute (less a second of client-side timing slack) saw more than 30 admissions.
    for (let i = 0; i < admitted.length; i++) {
      const inWindow = admitted.filter((t) => t >= admitted[i] && t < admitted[i] + 59_000).length;
      expect(inWindow).toBeLessThanOrEqual(30);
    }
    expect(admitted.length).toBeGreaterThan(0);
  }, 120_000);
});
