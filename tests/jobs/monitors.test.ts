/**
 * Monitors (issue #31 item 4): a saved scrape or crawl run on a schedule with the `changes` format
 * on, calling its webhook only when a page is new, changed or removed. In process (app.fetch),
 * on SQLite and on PostgreSQL, against a local site whose pages change between runs and a local
 * webhook receiver. Time is the fake clock's: the scheduler's timer is off and each round is a
 * call to tick(), so a run starts exactly when the test says it is due.
 */
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { rmSync } from "node:fs";
import type { MonitorRecord } from "../../core/ports/monitors.ts";
import { SqlMonitorStore } from "../../adapters/jobs/monitor-store.ts";
import { pgDriver, sqliteDriver } from "../../adapters/jobs/sql-drivers.ts";
import { openSqlite } from "../../adapters/shared/sqlite.ts";
import { openPostgres } from "../../adapters/storage/postgres.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";
import { tempDir } from "../helpers/temp.ts";
import { htmlPages, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { makeApp, MemoryLogger, type TestApp } from "../helpers/app.ts";
import { monitorRunId } from "../../core/ids.ts";
import { tempDatabase } from "../helpers/pg.ts";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.ts";

type Json = Record<string, any>;
const HOUR = 3_600_000;
const SECRET = "monitor-secret-never-shown";

const page = (title: string, words: string, links: string[] = []) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><article><h1>${title}</h1><p>${words} This page belongs to a small site that a monitor watches.</p><p>${links.map((l) => `<a href="${l}">${l}</a>`).join(" ")}</p></article></main></body></html>`;
/** What each path serves now: [status, body]. */
let site: ReturnType<typeof htmlPages>;
let server: PageServer;
let base = "";
let hook: Receiver;

beforeAll(async () => {
  // Only the pages set here answer; robots.txt, sitemaps and any other path are a 404.
  server = await startPageServer();
  site = htmlPages(server);
  base = server.url;
  hook = await startReceiver();
});
afterAll(async () => {
  await hook?.close();
  await server?.close();
});

type Store = { env: Record<string, string>; dataDir?: string; close(): Promise<void> };
const STORES: Array<[string, () => Promise<Store>]> = [
  ["SQLite", async () => {
    const dataDir = tempDir("quarry-monitors-");
    return { env: {}, dataDir, close: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }],
  ["PostgreSQL", async () => {
    const db = await tempDatabase("monitors");
    return { env: { QUARRY_DATABASE_URL: db.url }, close: db.drop };
  }],
];

const PLANS = JSON.stringify({ free: { quota: 10_000, per_minute: 100_000, monitors: 3, jobs_concurrent: 5 }, broke: { quota: 0, per_minute: 100_000 } });

async function open(env: Record<string, string>, dataDir?: string): Promise<TestApp> {
  return makeApp({
    storage: "sqlite",
    ...(dataDir ? { dataDir } : {}),
    pages: createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) }),
    env: { QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: PLANS, ...env },
    options: { services: { monitorTickMs: 0, jobs: { webhooks: { backoffMs: 50 }, watchdogMs: 100 } } },
  });
}

describe.each(STORES)("monitors (%s)", (name, openStore) => {
  let store: Store;
  let t: TestApp;
  let acme: { secret: string; id: string };
  let other: string;
  let searchOnly: string;
  const path = `/${name.toLowerCase()}`;

  const req = (p: string, key: string, init: { method?: string; json?: unknown } = {}) => t.request(p, { key, ...init });
  const create = async (body: Json, key = acme.secret) => {
    const res = await req("/v1/monitors", key, { method: "POST", json: body });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const runs = async (id: string, key = acme.secret): Promise<Json[]> => (await (await req(`/v1/monitors/${id}/runs`, key)).json()).data;
  const deliveries = (monitorId: string) => hook.got.filter((g) => g.json.id === monitorId);

  /** Waits until the jobs of the runs under way have ended (without settling the runs). */
  async function jobsEnded(): Promise<void> {
    for (const m of (await (await req("/v1/monitors", acme.secret)).json()).data as Json[]) {
      for (const r of await runs(m.id)) {
        if (r.status !== "running") continue;
        const jobPath = `/v1/${m.type === "crawl" ? "crawl" : "batch/scrape"}/${r.job_id}`;
        for (let i = 0; ; i++) {
          const job = await (await req(jobPath, acme.secret)).json();
          if (["completed", "failed", "cancelled"].includes(job.status)) break;
          if (i > 400) throw new Error(`${jobPath} did not end`);
          await new Promise((r) => setTimeout(r, 25));
        }
      }
    }
  }

  /** One scheduler round, then each run it started is awaited to its job's end, then a round settles them. */
  async function round(): Promise<void> {
    await t.monitors!.tick();
    await jobsEnded();
    await t.monitors!.tick();
  }

  /** Waits until the receiver has `n` deliveries for the monitor (each stored before the run is done, sent right after). */
  async function delivered(monitorId: string, n: number): Promise<Json[]> {
    for (let i = 0; i < 400 && deliveries(monitorId).length < n; i++) await new Promise((r) => setTimeout(r, 10));
    return deliveries(monitorId);
  }

  beforeAll(async () => {
    store = await openStore();
    t = await open(store.env, store.dataDir);
    acme = await t.key("acme", ["scrape"]);
    other = (await t.key("other", ["scrape"])).secret;
    searchOnly = (await t.key("searcher", ["search"])).secret;
    site.set(`${path}/pricing`, [200, page("Pricing", "The plan costs ten euros a month.")]);
  }, 30_000);
  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  it("a scrape monitor: the first run is the baseline (nothing sent), an unchanged page sends nothing, a changed page sends one signed webhook with its diff", async () => {
    const created = await create({ name: "pricing", scrape: { url: `${base}${path}/pricing` }, interval_seconds: 3600, webhook: { url: `${hook.base}/hook${path}`, secret: SECRET } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const m = created.body;
    expect(m).toMatchObject({ name: "pricing", type: "scrape", url: `${base}${path}/pricing`, interval_seconds: 3600, paused: false, diff: true, webhook: { url: `${hook.base}/hook${path}` }, next_run_at: new Date(t.clock.now()).toISOString(), last_run_at: null });
    expect(m.id).toMatch(/^mon_[0-9A-Z]{26}$/);
    expect(JSON.stringify(m)).not.toContain(SECRET);
    expect(await (await req(`/v1/monitors/${m.id}`, acme.secret)).json()).toEqual(m);

    // Baseline: one run, its page read, nothing sent.
    await round();
    let r = await runs(m.id);
    expect(r).toHaveLength(1);
    expect(r[0]).toMatchObject({ status: "done", outcome: "baseline", pages: 1, changed: 1 });
    expect(r[0]!.job_id).toMatch(/^batch_/);
    expect(deliveries(m.id)).toHaveLength(0);

    // Not due yet: nothing runs.
    await t.clock.advance(HOUR - 1000);
    await round();
    expect(await runs(m.id)).toHaveLength(1);

    // Due, page the same: a run, nothing sent.
    await t.clock.advance(1000);
    await round();
    r = await runs(m.id);
    expect(r).toHaveLength(2);
    expect(r[0]).toMatchObject({ status: "done", outcome: "unchanged", pages: 1, changed: 0 });
    expect(deliveries(m.id)).toHaveLength(0);

    // Due, page changed: one webhook, signed, with the diff.
    site.set(`${path}/pricing`, [200, page("Pricing", "The plan costs twelve euros a month.")]);
    await t.clock.advance(HOUR);
    await round();
    r = await runs(m.id);
    expect(r).toHaveLength(3);
    expect(r[0]).toMatchObject({ status: "done", outcome: "changed", pages: 1, changed: 1 });
    const [got] = await delivered(m.id, 1);
    expect(deliveries(m.id)).toHaveLength(1);
    expect(got!.path).toBe(`/hook${path}`);
    expect(got!.headers["x-quarry-signature"]).toBe(`sha256=${createHmac("sha256", SECRET).update(got!.body).digest("hex")}`);
    expect(got!.headers["x-quarry-delivery"]).toBe(r[0]!.id);
    expect(got!.json).toMatchObject({ type: "monitor.changed", id: m.id, data: { monitor_id: m.id, run_id: r[0]!.id, job_id: r[0]!.job_id, type: "scrape", pages: 1, changed_count: 1 } });
    const [changed] = got!.json.data.changed;
    expect(changed).toMatchObject({ url: `${base}${path}/pricing`, change_status: "changed", visibility: "visible", status_code: 200 });
    expect(changed.diff).toContain("-The plan costs ten euros a month.");
    expect(changed.diff).toContain("+The plan costs twelve euros a month.");

    // Metered like the reads it made: one crawl-group unit per page read, on the key that created it.
    const usage = await (await req("/v1/usage", acme.secret)).json();
    expect(usage.endpoints.crawl).toBe(3);
    expect(usage.used).toBe(3);

    // Paused: due again, but no run starts. Resumed: the run that fell due starts at once.
    const paused = await req(`/v1/monitors/${m.id}`, acme.secret, { method: "PATCH", json: { paused: true } });
    expect(paused.status).toBe(200);
    expect((await paused.json()).paused).toBe(true);
    await t.clock.advance(3 * HOUR);
    await round();
    expect(await runs(m.id)).toHaveLength(3);
    expect((await (await req(`/v1/monitors/${m.id}`, acme.secret, { method: "PATCH", json: { paused: false } })).json()).paused).toBe(false);
    await round();
    r = await runs(m.id);
    expect(r).toHaveLength(4);
    expect(r[0]).toMatchObject({ outcome: "unchanged" });
    expect(deliveries(m.id)).toHaveLength(1);

    // The page is gone (404): that is news too.
    site.set(`${path}/pricing`, [404, "<h1>Gone</h1>"]);
    await t.clock.advance(HOUR);
    await round();
    expect((await runs(m.id))[0]).toMatchObject({ outcome: "changed", pages: 1, changed: 1 });
    const gone = (await delivered(m.id, 2))[1]!;
    expect(gone.json.data.changed).toMatchObject([{ url: `${base}${path}/pricing`, change_status: "removed", visibility: "hidden", status_code: 404 }]);
    site.set(`${path}/pricing`, [200, page("Pricing", "The plan costs twelve euros a month.")]);

    // Another account: a 404 everywhere, and not listed.
    for (const [method, p, json] of [["GET", `/v1/monitors/${m.id}`], ["GET", `/v1/monitors/${m.id}/runs`], ["PATCH", `/v1/monitors/${m.id}`, { paused: true }], ["DELETE", `/v1/monitors/${m.id}`]] as const) {
      const res = await req(p, other, { method, ...(json ? { json } : {}) });
      expect(res.status, `${method} ${p}`).toBe(404);
      expect((await res.json()).error.code).toBe("not_found");
    }
    expect((await (await req("/v1/monitors", other)).json()).data).toEqual([]);
    expect(((await (await req("/v1/monitors", acme.secret)).json()).data as Json[]).map((x) => x.id)).toContain(m.id);

    // Deleted: gone with the reads it compared against, and it never runs again.
    expect(await t.ports.reads!.last("acme", `monitor:${m.id}`, `${base}${path}/pricing`)).not.toBeNull();
    const del = await req(`/v1/monitors/${m.id}`, acme.secret, { method: "DELETE" });
    expect(await del.json()).toEqual({ id: m.id, deleted: true });
    expect((await req(`/v1/monitors/${m.id}`, acme.secret)).status).toBe(404);
    expect((await req(`/v1/monitors/${m.id}/runs`, acme.secret)).status).toBe(404);
    expect(await t.ports.reads!.last("acme", `monitor:${m.id}`, `${base}${path}/pricing`)).toBeNull();
    await t.clock.advance(2 * HOUR);
    await t.monitors!.tick();
    expect(deliveries(m.id)).toHaveLength(2);
  }, 60_000);

  it("a crawl monitor sends the pages changed, removed and newly found, and not the ones that stayed the same", async () => {
    site.set(`${path}/docs/`, [200, page("Docs", "The documentation home.", [`${path}/docs/a`, `${path}/docs/b`, `${path}/docs/d`])]);
    site.set(`${path}/docs/a`, [200, page("Alpha", "Alpha says one thing.")]);
    site.set(`${path}/docs/b`, [200, page("Beta", "Beta will go away.")]);
    site.set(`${path}/docs/d`, [200, page("Delta", "Delta never changes.")]);
    const { status, body: m } = await create({ crawl: { url: `${base}${path}/docs/`, limit: 10, max_depth: 1, sitemap: "skip" }, interval_seconds: 600, webhook: { url: `${hook.base}/crawl${path}` } });
    expect(status, JSON.stringify(m)).toBe(201);
    expect(m).toMatchObject({ type: "crawl", crawl: { url: `${base}${path}/docs/`, limit: 10, max_depth: 1 } });
    await round();
    expect((await runs(m.id))[0]).toMatchObject({ outcome: "baseline", pages: 4 });

    site.set(`${path}/docs/`, [200, page("Docs", "The documentation home, now with Gamma.", [`${path}/docs/a`, `${path}/docs/b`, `${path}/docs/c`, `${path}/docs/d`])]);
    site.set(`${path}/docs/a`, [200, page("Alpha", "Alpha says another thing.")]);
    site.set(`${path}/docs/b`, [404, "<h1>Gone</h1>"]);
    site.set(`${path}/docs/c`, [200, page("Gamma", "Gamma is new.")]);
    await t.clock.advance(600_000);
    await round();
    const [run] = await runs(m.id);
    expect(run).toMatchObject({ outcome: "changed", pages: 5, changed: 4 });
    const [got] = await delivered(m.id, 1);
    expect(got!.headers["x-quarry-signature"]).toBeUndefined(); // no secret, no signature
    const byPath = Object.fromEntries((got!.json.data.changed as Json[]).map((c) => [new URL(c.url).pathname, c.change_status]));
    expect(byPath).toEqual({ [`${path}/docs/`]: "changed", [`${path}/docs/a`]: "changed", [`${path}/docs/b`]: "removed", [`${path}/docs/c`]: "new" });
    await req(`/v1/monitors/${m.id}`, acme.secret, { method: "DELETE" });
  }, 60_000);

  it("keeps only the reads its next run compares with: a page the crawl no longer reaches is forgotten, one it reached but could not read keeps its last good read", async () => {
    const reads = t.ports.reads!;
    const at = (p: string) => `${base}${path}/kept${p}`;
    site.set(`${path}/kept/`, [200, page("Home", "The home page.", [`${path}/kept/a`, `${path}/kept/b`, `${path}/kept/c`])]);
    for (const p of ["a", "b", "c"]) site.set(`${path}/kept/${p}`, [200, page(p, `Page ${p} says something.`)]);
    const { body: m } = await create({ crawl: { url: at("/"), limit: 10, max_depth: 1, sitemap: "skip" }, interval_seconds: 600, webhook: { url: `${hook.base}/kept${path}` } });
    const tag = `monitor:${m.id}`;
    await round();
    expect((await runs(m.id))[0]).toMatchObject({ outcome: "baseline", pages: 4 });
    for (const p of ["/", "/a", "/b", "/c"]) expect(await reads.last("acme", tag, at(p)), p).not.toBeNull();
    const before = await reads.last("acme", tag, at("/b"));

    // The home page no longer links to /c (it still answers), and /b fails for now.
    site.set(`${path}/kept/`, [200, page("Home", "The home page.", [`${path}/kept/a`, `${path}/kept/b`])]);
    site.set(`${path}/kept/b`, [500, "<h1>busy</h1>"]);
    await t.clock.advance(600_000);
    await round();
    expect((await runs(m.id))[0]).toMatchObject({ outcome: "unchanged", pages: 3 });
    expect(await reads.last("acme", tag, at("/c"))).toBeNull();
    expect(await reads.last("acme", tag, at("/b"))).toEqual(before);
    expect((await reads.last("acme", tag, at("/a")))!.readAt).toBe(t.clock.now());

    // /b is back unchanged: compared with its last good read, it is `same` (not `new`); /c, linked again, is `new`.
    site.set(`${path}/kept/`, [200, page("Home", "The home page.", [`${path}/kept/a`, `${path}/kept/b`, `${path}/kept/c`])]);
    site.set(`${path}/kept/b`, [200, page("b", "Page b says something.")]);
    await t.clock.advance(600_000);
    await round();
    const [got] = await delivered(m.id, 1);
    expect((got!.json.data.changed as Json[]).map((c) => [new URL(c.url).pathname, c.change_status])).toEqual([[`${path}/kept/c`, "new"]]);
    expect(await reads.last("acme", tag, at("/c"))).not.toBeNull();
    await req(`/v1/monitors/${m.id}`, acme.secret, { method: "DELETE" });
    expect((await reads.tags!("monitor:")).filter((x) => x.tag === tag)).toEqual([]);
  }, 60_000);

  it("deleted while its run is under way: the run's job is cancelled and keeps no reads; reads of a monitor that no longer exists are swept", async () => {
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    site.set(`${path}/slow/`, [200, page("Home", "The home page.", [`${path}/slow/wait`])]);
    server.route(`${path}/slow/wait`, (_req, res) => void held.then(() => res.writeHead(200, { "content-type": "text/html" }).end(page("Wait", "A slow page."))));
    const { body: m } = await create({ crawl: { url: `${base}${path}/slow/`, limit: 10, max_depth: 1, sitemap: "skip" }, interval_seconds: 600, webhook: { url: `${hook.base}/slow${path}` } });
    await t.monitors!.tick();
    const [run] = await runs(m.id);
    expect(run).toMatchObject({ status: "running" });
    for (let i = 0; i < 400 && !server.hits.includes(`${path}/slow/wait`); i++) await new Promise((r) => setTimeout(r, 10));
    expect(server.hits).toContain(`${path}/slow/wait`);
    expect((await req(`/v1/monitors/${m.id}`, acme.secret, { method: "DELETE" })).status).toBe(200);
    release();
    const job = await (await req(`/v1/crawl/${run!.job_id}`, acme.secret)).json();
    expect(job.status).toBe("cancelled");
    await new Promise((r) => setTimeout(r, 100));
    expect((await t.ports.reads!.tags!("monitor:")).filter((x) => x.tag === `monitor:${m.id}`)).toEqual([]);

    // A read left under a deleted monitor's tag (an instance died between deleting it and forgetting its reads) is swept; a live monitor's are not.
    const { body: live } = await create({ scrape: { url: `${base}${path}/pricing` }, interval_seconds: 600, webhook: { url: `${hook.base}/live${path}` } });
    await round();
    const gone = "mon_01KAAAAAAAAAAAAAAAAAAAAAAA";
    await t.ports.reads!.exchange("acme", `monitor:${gone}`, `${base}${path}/pricing`, { readAt: 1, statusCode: 200, gone: false, digest: "d", markdown: "left" });
    await t.ports.reads!.exchange("acme", "daily", `${base}${path}/pricing`, { readAt: 1, statusCode: 200, gone: false, digest: "d", markdown: "not a monitor's" });
    await t.ports.reads!.exchange("acme", "monitor:mine", `${base}${path}/pricing`, { readAt: 1, statusCode: 200, gone: false, digest: "d", markdown: "a tag the account chose" });
    expect(await t.monitors!.sweep()).toBe(1);
    expect(await t.ports.reads!.last("acme", `monitor:${gone}`, `${base}${path}/pricing`)).toBeNull();
    expect(await t.ports.reads!.last("acme", "daily", `${base}${path}/pricing`)).not.toBeNull();
    expect(await t.ports.reads!.last("acme", "monitor:mine", `${base}${path}/pricing`)).not.toBeNull();
    expect(await t.ports.reads!.last("acme", `monitor:${live.id}`, `${base}${path}/pricing`)).not.toBeNull();
    await req(`/v1/monitors/${live.id}`, acme.secret, { method: "DELETE" });
  }, 60_000);

  it("refuses what it cannot run: scope, validation, unreachable URLs, the plan's cap; a run refused by quota is recorded", async () => {
    const good = { scrape: { url: `${base}${path}/pricing` }, webhook: { url: `${hook.base}/x` } };
    const scope = await req("/v1/monitors", searchOnly, { method: "POST", json: good });
    expect(scope.status).toBe(403);
    expect((await scope.json()).error.code).toBe("insufficient_scope");
    expect((await req("/v1/monitors", searchOnly)).status).toBe(403);

    const bad: Array<[Json, string]> = [
      [{ scrape: good.scrape }, "webhook"],
      [{ webhook: good.webhook }, "scrape"],
      [{ ...good, crawl: { url: `${base}/` } }, "crawl"],
      [{ ...good, interval_seconds: 60 }, "interval_seconds"],
      [{ ...good, interval_seconds: 1.5 }, "interval_seconds"],
      [{ ...good, extra: 1 }, "extra"],
      [{ ...good, scrape: { url: `${base}/`, formats: ["nope"] } }, "formats"],
      [{ ...good, scrape: { url: `${base}/`, webhook: good.webhook } }, "webhook"],
    ];
    for (const [body, field] of bad) {
      const { status, body: out } = await create(body);
      expect(status, JSON.stringify(body)).toBe(400);
      expect(out.error.code).toBe("invalid_request");
      expect(JSON.stringify(out.error), JSON.stringify(body)).toContain(field);
    }
    for (const [body, field] of [[{ ...good, webhook: { url: "http://10.1.2.3/hook" } }, "webhook.url"], [{ ...good, scrape: { url: "ftp://example.org/" } }, "scrape.url"], [{ ...good, crawl: { url: "http://192.168.1.1/" }, scrape: undefined }, "crawl.url"]] as const) {
      const { status, body: out } = await create(body);
      expect(status, JSON.stringify(body)).toBe(422);
      expect(out.error.code).toBe("url_not_allowed");
      expect(JSON.stringify(out.error)).toContain(field);
    }
    expect((await req("/v1/monitors/mon_nope", acme.secret)).status).toBe(404);
    const ids: string[] = [];
    // Three allowed on this plan (monitors: 3).
    for (let i = 0; i < 3; i++) {
      const { status, body } = await create({ ...good, paused: true });
      expect(status).toBe(201);
      ids.push(body.id);
    }
    const empty = await req(`/v1/monitors/${ids[0]}`, acme.secret, { method: "PATCH", json: {} });
    expect(empty.status).toBe(400);
    const shortPatch = await req(`/v1/monitors/${ids[0]}`, acme.secret, { method: "PATCH", json: { interval_seconds: 10 } });
    expect(shortPatch.status).toBe(400);
    const over = await create(good);
    expect(over.status).toBe(403);
    expect(over.body.error.code).toBe("too_many_monitors");
    expect(over.body.error.message).toContain("monitors: 3");
    for (const id of ids) await req(`/v1/monitors/${id}`, acme.secret, { method: "DELETE" });

    // An account whose quota is spent: its monitor's run is refused and recorded as such.
    const broke = await t.key("broke", ["scrape"], "broke");
    const { body: m } = await create(good, broke.secret);
    await t.monitors!.tick();
    const [run] = await runs(m.id, broke.secret);
    expect(run).toMatchObject({ status: "done", outcome: "quota_exceeded", job_id: null, pages: 0 });
    expect(run!.detail).toContain("quota");
  }, 30_000);

  // Two servers on one SQLite file are refused at start (one server per file), so this is PostgreSQL's alone.
  if (name === "PostgreSQL") it("two instances on one database start a due run once", async () => {
    const second = await open(store.env);
    try {
      const { body: m } = await create({ scrape: { url: `${base}${path}/pricing` }, webhook: { url: `${hook.base}/x` } });
      await Promise.all([t.monitors!.tick(), second.monitors!.tick(), t.monitors!.tick(), second.monitors!.tick()]);
      const r = await runs(m.id);
      expect(r).toHaveLength(1);
      expect(r[0]!.status).toMatch(/running|done/);
      await jobsEnded(); // its page counted before the next test measures usage
      await req(`/v1/monitors/${m.id}`, acme.secret, { method: "DELETE" });
    } finally {
      await second.close();
    }
  }, 30_000);

  it("a run an instance claimed and died holding is started once after its lease; one whose job ended while the server was down is settled once after the restart", async () => {
    site.set(`${path}/restart`, [200, page("Restart", "A page read across a restart.")]);
    const usedBefore = (await (await req("/v1/usage", acme.secret)).json()).used;
    const { body: m } = await create({ scrape: { url: `${base}${path}/restart` }, webhook: { url: `${hook.base}/restart${path}` } });
    const now = t.clock.now();
    // Another instance claims the due run, then dies before making its job.
    const [claimed] = await t.ports.monitors!.claimDue(now, now + 60_000, 10, () => monitorRunId(now));
    expect(claimed).toMatchObject({ monitorId: m.id, state: "starting" });
    await t.monitors!.tick();
    expect(await runs(m.id)).toMatchObject([{ id: claimed!.id, status: "starting", job_id: null }]);
    // Its lease runs out: this instance starts it, once.
    await t.clock.advance(60_000);
    await Promise.all([t.monitors!.tick(), t.monitors!.tick()]);
    let r = await runs(m.id);
    expect(r).toHaveLength(1);
    expect(r[0]).toMatchObject({ id: claimed!.id, status: "running" });
    expect(r[0]!.job_id).toMatch(/^batch_/);
    // As if that instance died after making the job but before recording it: the run is taken over again, and finds its job rather than making another.
    const job = r[0]!.job_id;
    expect(await t.ports.monitors!.advance(claimed!.id, "running", { state: "starting", leaseUntil: 0 })).toBe(true);
    await t.monitors!.tick();
    expect(await runs(m.id)).toMatchObject([{ id: claimed!.id, status: "running", job_id: job }]);
    await jobsEnded();
    // The server stops before settling the run; the next one on the same store settles it, once.
    await t.close();
    t = await open(store.env, store.dataDir);
    await Promise.all([t.monitors!.tick(), t.monitors!.tick()]);
    r = await runs(m.id);
    expect(r).toHaveLength(1);
    expect(r[0]).toMatchObject({ id: claimed!.id, status: "done", outcome: "baseline", pages: 1, job_id: job });
    // One page read, counted once.
    expect((await (await req("/v1/usage", acme.secret)).json()).used).toBe(usedBefore + 1);
    expect(deliveries(m.id)).toHaveLength(0);
    await req(`/v1/monitors/${m.id}`, acme.secret, { method: "DELETE" });
  }, 30_000);

  it("a monitor whose key was revoked records its runs as key_revoked and reads nothing", async () => {
    const k = await t.key("acme", ["scrape", "keys"]);
    const { body: m } = await create({ scrape: { url: `${base}${path}/pricing` }, webhook: { url: `${hook.base}/x` } }, k.secret);
    await t.ports.keys.revokeKey(k.id, new Date(t.clock.now()).toISOString());
    await t.monitors!.tick();
    expect(await runs(m.id)).toMatchObject([{ status: "done", outcome: "key_revoked", job_id: null }]);
    await req(`/v1/monitors/${m.id}`, acme.secret, { method: "DELETE" });
  });
});

/**
 * The store's claims, with two stores on one database (PostgreSQL: two pools, as two instances
 * have; SQLite: one file is one server's (adapters/shared/server-lock.ts), so two stores on its one
 * connection, as two schedulers racing in one process): a due monitor is claimed by one of them however many ask at once, and a run
 * whose holder died before starting its job is taken over once its lease runs out, by one of them.
 */
const STORE_PAIRS: Array<[string, () => Promise<{ a: SqlMonitorStore; b: SqlMonitorStore; close(): Promise<void> }>]> = [
  ["SQLite", async () => {
    const dir = tempDir("quarry-monitors-");
    const x = await openSqlite(dir, nodeRuntime.sqlite);
    const driver = sqliteDriver(x.sync);
    const a = new SqlMonitorStore(driver);
    await a.init();
    return { a, b: new SqlMonitorStore(driver), close: async () => (await x.close(), rmSync(dir, { recursive: true, force: true })) };
  }],
  ["PostgreSQL", async () => {
    const db = await tempDatabase("monitor_claims");
    const logger = new MemoryLogger();
    const [x, y] = [await openPostgres(db.url, logger), await openPostgres(db.url, logger)];
    return { a: new SqlMonitorStore(pgDriver(x.pool)), b: new SqlMonitorStore(pgDriver(y.pool)), close: async () => (await x.close(), await y.close(), await db.drop()) };
  }],
];

describe.each(STORE_PAIRS)("monitor claims across instances (%s)", (_name, pair) => {
  it("a due run is started once, and a dead holder's run is taken over once", async () => {
    const { a, b, close } = await pair();
    try {
      const now = Date.UTC(2026, 10, 22, 12);
      const m: MonitorRecord = {
        id: "mon_01JAAAAAAAAAAAAAAAAAAAAAAA", account: "acme", keyId: "key_x", name: null, kind: "batch", request: { url: "https://example.org/" }, intervalMs: 600_000,
        webhook: { url: "https://example.org/hook", secret: null }, paused: false, createdAt: now, updatedAt: now, nextRunAt: now, lastRunAt: null,
      };
      expect(await a.create(m, 5)).toEqual({ created: true });
      let n = 0;
      const id = () => `run_${String(++n).padStart(26, "0")}`;
      const claims = await Promise.all([...Array(8)].map((_, i) => (i % 2 ? a : b).claimDue(now, now + 60_000, 10, id)));
      const runs = claims.flat();
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ monitorId: m.id, state: "starting", dueAt: now });
      expect((await b.get(m.id))!.nextRunAt).toBe(now + 600_000);
      // Not yet due again; and its holder still holds the run.
      expect((await Promise.all([a.claimDue(now + 1000, now + 61_000, 10, id), b.claimRuns("starting", now + 1000, now + 61_000, 10)])).flat()).toEqual([]);
      // Its holder died: after the lease, one of the others takes the run over, once.
      const taken = (await Promise.all([a.claimRuns("starting", now + 60_000, now + 120_000, 10), b.claimRuns("starting", now + 60_000, now + 120_000, 10)])).flat();
      expect(taken.map((r) => r.id)).toEqual([runs[0]!.id]);
      expect(await a.advance(runs[0]!.id, "starting", { state: "running", jobId: "batch_x" })).toBe(true);
      expect(await b.advance(runs[0]!.id, "starting", { state: "running", jobId: "batch_y" })).toBe(false);
      // Due again while that run still goes: the new run is recorded as skipped, not started.
      const next = await b.claimDue(now + 600_000, now + 660_000, 10, id);
      expect(next).toMatchObject([{ state: "done", outcome: "skipped" }]);
      // Paused: never claimed.
      await a.update(m.id, { paused: true }, now);
      expect(await a.claimDue(now + 10 * 600_000, now, 10, id)).toEqual([]);
      expect((await a.runs(m.id, 10)).map((r) => r.outcome)).toEqual(["skipped", null]);
      // The plan's cap is checked in the store.
      expect(await b.create({ ...m, id: "mon_01JBBBBBBBBBBBBBBBBBBBBBBB" }, 1)).toEqual({ created: false, count: 1 });
      expect(await b.delete(m.id)).toBe(true);
      expect(await a.runs(m.id, 10)).toEqual([]);
    } finally {
      await close();
    }
  }, 30_000);
});
