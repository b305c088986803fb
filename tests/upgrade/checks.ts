/**
 * What an operator who upgrades depends on, checked over HTTP and the CLI against this version's
 * server started on data an older version wrote (SQLite file or PostgreSQL database, see
 * sqlite.test.ts and postgres.test.ts): accounts and plans, keys (revoked ones stay revoked), this
 * month's usage and its days, the source registry, the finished batch job with its pages, and the
 * interrupted crawl, which resumes and finishes without fetching again a page the old version had
 * recorded, counting each page once; and collections, which older versions did not have, work on it.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { cli, startServer, type Server } from "../helpers/server.ts";
import { allPages, json, waitFor, type Job } from "../helpers/job-http.ts";
import { sitePagePaths, type TestSite } from "../helpers/test-site.ts";
import type { Manifest } from "./fixture.ts";
import { DATA_FORMAT } from "../../adapters/storage/data-format.ts";

/** The old version's data, ready for this version: its environment, and SQL on it as it is now. */
export interface Stored {
  env: Record<string, string>;
  /** Whether the old version kept per-day usage (quarry_usage_daily). */
  keptDays: boolean;
  rows<T>(sql: string): Promise<T[]>;
  close(): Promise<void>;
}

const PLANS = '{"free":{"quota":1000,"per_minute":100000},"pro":{"quota":100000,"per_minute":100000}}';
const path = (u: string) => new URL(u).pathname + new URL(u).search;

async function source(stored: Stored): Promise<{ fetch_ok: number; first_seen: string } | null> {
  const row = (await stored.rows<{ value: string }>("SELECT value FROM quarry_kv WHERE key = 'source:127.0.0.1'"))[0];
  return row ? JSON.parse(row.value) : null;
}

export function upgradeChecks(site: () => TestSite, commit: string, m0: Manifest, open: (m: Manifest, siteUrl: string) => Promise<Stored>): void {
  let m: Manifest;
  let stored: Stored;
  let server: Server | null = null;
  let env: Record<string, string>;
  let doneBefore: string[] = [];
  let unitsBefore = new Map<string, Record<string, number>>();
  let sourceBefore: { fetch_ok: number; first_seen: string } | null = null;
  let hitsFrom = 0;
  let keptDays = false;

  beforeAll(async () => {
    m = m0;
    stored = await open(m, site().ipUrl);
    env = { ...stored.env, QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: PLANS, QUARRY_EXTRACT_WORKERS: "0" };
    if (m.crawl) {
      doneBefore = (await stored.rows<{ url: string }>(`SELECT url FROM quarry_frontier WHERE job_id = '${m.crawl.id}' AND state = 'done'`)).map((r) => path(r.url));
    }
    for (const r of await stored.rows<{ key_id: string; grp: string; n: number }>("SELECT key_id, grp, n FROM quarry_usage")) {
      unitsBefore.set(r.key_id, { ...unitsBefore.get(r.key_id), [r.grp]: Number(r.n) });
    }
    sourceBefore = await source(stored);
    keptDays = stored.keptDays;
    hitsFrom = site().hits.length;
    server = await startServer("node", env);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await stored?.close();
  });

  it("keeps every account, plan and key: old keys authenticate, the revoked one stays revoked", async () => {
    const { main, bot, gone, pro } = m.keys;
    for (const k of [main, bot, pro]) {
      const res = await fetch(`${server!.url}/v1/usage`, { headers: { authorization: `Bearer ${k.key}` } });
      expect(res.status, k.name).toBe(200);
    }
    const refused = await fetch(`${server!.url}/v1/usage`, { headers: { authorization: `Bearer ${gone.key}` } });
    expect(refused.status).toBe(401);
    expect((await json(`${server!.url}/v1/usage`, pro.key)).plan).toBe("pro");
    expect((await json(`${server!.url}/v1/usage`, main.key)).plan).toBe("free");
    const listed = await json(`${server!.url}/v1/keys`, main.key);
    expect(listed.keys.map((k: Job) => k.id).sort()).toEqual([main.id, bot.id].sort());
    const accounts = JSON.parse(cli(["accounts", "list", "--json"], { ...env }).stdout);
    expect(accounts.accounts.map((a: Job) => [a.name, a.plan, a.active_keys])).toEqual([["acme", "free", 2], ["globex", "pro", 1]]);
  });

  it("keeps this month's usage of every key, the revoked one included, and its days add up", async () => {
    for (const [name, k] of Object.entries(m.keys)) {
      const before = unitsBefore.get(k.id) ?? {};
      if (name === "gone") continue;
      const usage = await json(`${server!.url}/v1/usage`, k.key);
      for (const [grp, n] of Object.entries(before)) if (grp !== "crawl" || !m.crawl || name !== "main") expect(usage.endpoints[grp], `${name} ${grp}`).toBe(n);
      const daily = await json(`${server!.url}/v1/usage/daily`, k.key);
      // A version from before the daily table kept no days: its units are in the month, on no day.
      // (The resumed crawl is still adding to main's days: checked once it has finished.)
      if (name !== "main" || !m.crawl) expect(daily.key.used, name).toBe(keptDays ? usage.used : 0);
    }
    const cliUsage = JSON.parse(cli(["usage", "--account", "acme", "--json"], { ...env }).stdout);
    const revoked = cliUsage.keys.find((k: Job) => k.id === m.keys.gone.id);
    expect(revoked.revoked_at).toBe(m.revoked.revoked_at);
    expect(revoked.used).toBe(Object.values(unitsBefore.get(m.keys.gone.id) ?? {}).reduce((a, b) => a + b, 0));
  });

  it("keeps the source registry", async () => {
    const health = await json(`${server!.url}/health`, "");
    expect(health.services.intelligence.sources_tracked).toBe(sourceBefore ? 1 : 0);
  });

  // Data from a version before crawls and batch scrapes holds no job: the job checks are made only
  // on data that has one (its manifest says so), instead of being reported as skipped.
  if (m0.batch) it("keeps the finished batch job and its pages", async () => {
    const batch = await json(`${server!.url}/v1/batch/scrape/${m.batch!.id}`, m.keys.bot.key);
    expect([batch.status, batch.completed, batch.failed]).toEqual([m.batch!.status, m.batch!.completed, m.batch!.failed]);
    expect(batch.data.filter((p: Job) => p.markdown?.includes("Quarry test site"))).toHaveLength(m.batch!.completed);
  });

  if (m0.crawl) it("resumes the interrupted crawl: every page once, none the old version read fetched again, each counted once", async () => {
    const { main } = m.keys;
    const after = await waitFor(`${server!.url}/v1/crawl/${m.crawl!.id}`, main.key, (j) => ["completed", "failed", "cancelled"].includes(j.status), 90_000);
    expect(after.status).toBe("completed");
    // A crawl that stopped early (its site seen as down, its deadline) also ends completed: say why. Its only
    // failures are the site's page that is missing and the one that never answers.
    expect({ stopped: after.stopped_reason, failed: after.failures.map((f: { url: string; error: string }) => `${path(f.url)} ${f.error}`).sort() })
      .toEqual({ stopped: null, failed: ["/missing http_404", "/slow timeout"] });
    const pages = await allPages(after, server!.url, main.key);
    const paths = pages.map((p) => path(p.url));
    for (const p of sitePagePaths()) expect(paths.filter((x) => x === p), p).toHaveLength(1);
    expect(new Set(paths).size).toBe(paths.length);
    expect(doneBefore.length).toBeGreaterThanOrEqual(m.crawl!.completed_at_kill);
    const refetched = site().hits.slice(hitsFrom).map((h) => h.path).filter((p) => doneBefore.includes(p));
    expect(refetched).toEqual([]);
    // The month's crawl units: what the old version counted, plus one per page read since (a
    // page's unit follows its record, so the last one may land just after the job's end).
    const expected = (unitsBefore.get(main.id)?.crawl ?? 0) + after.completed - doneBefore.length;
    const usage = await waitFor(`${server!.url}/v1/usage`, main.key, (u) => u.endpoints.crawl >= expected, 5_000);
    await new Promise((r) => setTimeout(r, 300)); // and nothing more comes after it
    expect((await json(`${server!.url}/v1/usage`, main.key)).endpoints.crawl).toBe(expected);
    expect((await json(`${server!.url}/v1/usage/daily`, main.key)).key.used).toBe(keptDays ? usage.used : 0);
  }, 120_000);

  it("tallies the webhook deliveries of a job started on the old data (the tally's table is added on start)", async () => {
    const { bot } = m.keys;
    const started = await json(`${server!.url}/v1/batch/scrape`, bot.key, {
      method: "POST",
      body: JSON.stringify({ urls: [`${site().ipUrl}/about?hooked=1`], webhook: { url: `${site().ipUrl}/contact`, events: ["completed"] } }),
    });
    const job = await waitFor(`${server!.url}/v1/batch/scrape/${started.id}`, bot.key, (j) => j.webhook?.delivered === 1, 30_000);
    expect(job.webhook).toEqual({ url: `${site().ipUrl}/contact`, delivered: 1, pending: 0, failed: 0, last_error: null });
  }, 60_000);

  // (Filled with documents, not a scrape: the source registry's check below counts the reads.)
  it("adds collections to the old data: an old key makes one, fills it and searches it", async () => {
    const { main } = m.keys;
    const call = (path: string, body: unknown) => json(`${server!.url}${path}`, main.key, { method: "POST", body: JSON.stringify(body) });
    expect((await call("/v1/collections", { name: "upgraded" })).name).toBe("upgraded");
    const added = await call("/v1/collections/upgraded/documents", { documents: [{ url: `${site().ipUrl}/about?indexed=1`, title: "About", text: "The lighthouse keeper's log is copied to the archive every evening." }] });
    expect(added.added, JSON.stringify(added)).toHaveLength(1);
    const found = await call("/v1/collections/upgraded/search", { query: "lighthouse keeper log" });
    expect(found.results.map((r: Job) => path(r.url))).toEqual(["/about?indexed=1"]);
    expect((await json(`${server!.url}/v1/collections/upgraded`, m.keys.pro.key)).error.code).toBe("not_found");
  });

  it("adds to the old source registry rather than starting it again", async () => {
    const scraped = await fetch(`${server!.url}/v1/scrape`, { method: "POST", headers: { authorization: `Bearer ${m.keys.main.key}`, "content-type": "application/json" }, body: JSON.stringify({ url: `${site().ipUrl}/about?again=1` }) });
    expect(scraped.status).toBe(200);
    await server!.stop();
    server = null;
    const src = (await source(stored))!;
    expect(src.fetch_ok).toBe(sourceBefore!.fetch_ok + 1);
    // The old data is now marked as this version's format (data-format.ts).
    expect((await stored.rows<{ format: number }>("SELECT format FROM quarry_format")).map((r) => Number(r.format))).toEqual([DATA_FORMAT]);
    expect(src.first_seen).toBe(sourceBefore!.first_seen);
  });
}
