/**
 * `quarry jobs list` and `quarry jobs cancel`: the operator sees every account's crawl and batch
 * jobs and stops one without its account's key, on the storage itself, while a real server is
 * crawling the local test site. The cancel reaches that server as a cancel through the API would:
 * the job's status says cancelled, the site sees no new page requests a moment later (the pages
 * waiting for their turn under the site's Crawl-delay are abandoned, not fetched), and the job's
 * webhook gets its "cancelled" event. On SQLite, and on PostgreSQL with two instances sharing the crawl.
 */
import Database from "better-sqlite3";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { SqlJobStore } from "../../adapters/jobs/sql-store.ts";
import { sqliteDriver } from "../../adapters/jobs/sql-drivers.ts";
import type { SyncSqlite } from "../../adapters/storage/sqlite-counters.ts";
import { jobRecord } from "../contracts/job-store-contract.ts";
import { json, waitFor } from "../helpers/job-http.ts";
import { tempDatabase } from "../helpers/pg.ts";
import { cli, createKeyCli, ROOT, startServer, tempDataDir, type CliResult, type Server } from "../helpers/server.ts";
import { startTestSite, type TestSite } from "../helpers/test-site.ts";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.ts";

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => {});
  cleanup = [];
});

const base = { QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_IP_RATE: "off" };
function cliAsync(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(ROOT, "bin/quarry.js"), ...args], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 30_000 }, (_err, stdout, stderr) => {
      resolve({ status: child.exitCode, stdout, stderr });
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let pgDrop: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const d of pgDrop) await d();
});

const STORES: Array<[string, () => Promise<Record<string, string>>]> = [
  ["SQLite", async () => ({ QUARRY_DATA_DIR: tempDataDir() })],
  ["PostgreSQL", async () => {
    const db = await tempDatabase("jobs_cli");
    pgDrop.push(db.drop);
    return { QUARRY_DATA_DIR: tempDataDir(), QUARRY_DATABASE_URL: db.url };
  }],
];

/** A webhook receiver on 127.0.0.1, closed after the test. */
async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanup.push(() => r.close());
  return r;
}

describe.each(STORES)("quarry jobs (%s)", (_name, open) => {
  it("lists every account's jobs and cancels a running crawl: the server stops fetching its pages and sends its webhook", async () => {
    // One page a second: the crawl is still running (pages waiting for their turn) when it is cancelled.
    const site: TestSite = await startTestSite({ crawlDelay: 1 });
    cleanup.push(() => site.close());
    const hook = await receiver();
    const env: Record<string, string> = { ...base, ...(await open()) };
    const server: Server = await startServer("node", env);
    cleanup.push(() => server.stop("SIGTERM"));
    // On PostgreSQL, two instances share the crawl's pages: both must stop.
    const servers = [server];
    if (env.QUARRY_DATABASE_URL) {
      const second = await startServer("node", env);
      cleanup.push(() => second.stop("SIGTERM"));
      servers.push(second);
    }
    const acme = createKeyCli(env, "acme", "scrape");
    const beta = createKeyCli(env, "beta", "scrape");

    const batch = await json(`${server.url}/v1/batch/scrape`, beta.key, { method: "POST", body: JSON.stringify({ urls: [`${site.ipUrl}/contact`, `${site.ipUrl}/about`] }) });
    await waitFor(`${server.url}/v1/batch/scrape/${batch.id}`, beta.key, (j) => j.status === "completed", 30_000);
    const started = await json(`${server.url}/v1/crawl`, acme.key, {
      method: "POST", body: JSON.stringify({ url: `${site.ipUrl}/`, limit: 60, max_depth: 5, webhook: { url: hook.url, events: ["cancelled"] } }),
    });
    const path = `${server.url}/v1/crawl/${started.id}`;
    const running = await waitFor(path, acme.key, (j) => j.completed >= 2, 30_000);
    expect(running.status).toBe("running");

    // Active jobs by default: the crawl, not the finished batch.
    const listed = cli(["jobs", "list", "--json"], env);
    expect(listed.status, listed.stderr).toBe(0);
    const active = JSON.parse(listed.stdout);
    expect(active).toMatchObject({ status: "active", account: null, limit: 100, more: false });
    expect(active.jobs).toHaveLength(1);
    expect(active.jobs[0]).toMatchObject({ id: started.id, kind: "crawl", account: "acme", status: "running", url: `${site.ipUrl}/`, urls: 1, stopped_reason: null, finished_at: null });
    expect(active.jobs[0].completed).toBeGreaterThanOrEqual(2);
    expect(active.jobs[0].discovered).toBeGreaterThan(active.jobs[0].completed + active.jobs[0].failed);
    expect(Date.parse(active.jobs[0].created_at)).toBeGreaterThan(Date.now() - 60_000);
    // Every status, newest first; the batch with one of its URLs and how many it has.
    const all = JSON.parse(cli(["jobs", "list", "--status", "all", "--json"], env).stdout);
    expect(all.jobs.map((j: any) => [j.id, j.account, j.status])).toEqual([[started.id, "acme", "running"], [batch.id, "beta", "completed"]]);
    expect(all.jobs[1]).toMatchObject({ kind: "batch", url: `${site.ipUrl}/about`, urls: 2, completed: 2, failed: 0 });
    expect(JSON.parse(cli(["jobs", "list", "--account", "beta", "--json"], env).stdout).jobs).toEqual([]);
    expect(JSON.parse(cli(["jobs", "list", "--account", "beta", "--status", "completed", "--json"], env).stdout).jobs.map((j: any) => j.id)).toEqual([batch.id]);
    const limited = JSON.parse(cli(["jobs", "list", "--status", "all", "--limit", "1", "--json"], env).stdout);
    expect([limited.jobs.map((j: any) => j.id), limited.more]).toEqual([[started.id], true]);
    // The table an operator reads.
    const table = cli(["jobs", "list"], env);
    expect(table.status).toBe(0);
    expect(table.stdout.split("\n")[0]).toMatch(/^ID +KIND +ACCOUNT +STATUS/);
    expect(table.stdout).toMatch(new RegExp(`${started.id} +crawl +acme +running +\\d+/\\d+/\\d+ .* ${site.ipUrl.replace(/\./g, "\\.")}/\\n`));
    expect(cli(["jobs", "list", "--account", "beta"], env).stdout).toBe("No active jobs of account beta.\n");

    // Run without blocking this process: the webhook receiver above answers the CLI's delivery.
    const cancelled = await cliAsync(["jobs", "cancel", started.id, "--json"], env);
    const at = Date.now();
    expect(cancelled.status, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ id: started.id, kind: "crawl", account: "acme", status: "cancelled", stopped_reason: "cancelled" });
    // The server sees it as its own cancel: the job's status, for its owner.
    const after = await json(path, acme.key);
    expect(after).toMatchObject({ status: "cancelled", stopped_reason: "cancelled" });
    for (const s of servers) expect(await json(`${s.url}/v1/crawl/${started.id}`, acme.key)).toMatchObject({ status: "cancelled" });
    expect(after.finished_at).not.toBeNull();
    // No page request starts 4 s after the cancel (two watchdog rounds, room for a loaded machine;
    // it would go on a page a second if the server did not notice): the one waiting for its turn is abandoned.
    await sleep(8000);
    const late = site.hits.filter((h) => h.start > at + 4000 && h.path !== "/robots.txt");
    expect(late.map((h) => h.path)).toEqual([]);
    const final = await json(path, acme.key);
    expect(final.status).toBe("cancelled");
    expect(final.completed + final.failed).toBeLessThan(final.discovered);
    expect(hook.got.map(({ json: e }) => [e.type, e.id, e.data.status])).toEqual([["crawl.cancelled", started.id, "cancelled"]]);
    expect(JSON.parse(cli(["jobs", "list", "--json"], env).stdout).jobs).toEqual([]);

    // Cancelling it again, or a finished batch: said, exit 2, nothing changed.
    const again = cli(["jobs", "cancel", started.id], env);
    expect([again.status, again.stdout]).toEqual([2, ""]);
    expect(again.stderr).toContain(`job ${started.id} already ended: cancelled; nothing changed`);
    const finished = cli(["jobs", "cancel", batch.id, "--json"], env);
    expect([finished.status, finished.stdout]).toEqual([2, ""]);
    expect(finished.stderr).toContain(`job ${batch.id} already ended: completed; nothing changed`);
    const batchAfter = await json(`${server.url}/v1/batch/scrape/${batch.id}`, beta.key);
    expect(batchAfter).toMatchObject({ status: "completed", stopped_reason: null });
    expect(JSON.parse(cli(["jobs", "list", "--status", "completed", "--json"], env).stdout).jobs[0]).toMatchObject({ id: batch.id, finished_at: batchAfter.finished_at });
  }, 120_000);
});

describe("quarry jobs: what cannot be done as typed is exit 2", () => {
  it("an unknown job id, account, status or limit; a missing or extra argument; an option the command does not take", () => {
    const env = { QUARRY_DATA_DIR: tempDataDir() };
    createKeyCli(env, "acme", "scrape");
    const cases: Array<[string[], string]> = [
      [["jobs", "cancel", "crawl_01ARZ3NDEKTSV4RRFFQ69G5FAV"], 'no job "crawl_01ARZ3NDEKTSV4RRFFQ69G5FAV"'],
      [["jobs", "cancel", "nope"], 'no job "nope"'],
      [["jobs", "cancel"], "usage: quarry jobs cancel JOB_ID"],
      [["jobs", "cancel", "crawl_a", "crawl_b"], 'takes only JOB_ID, not "crawl_b"'],
      [["jobs", "list", "--account", "nobody"], 'no account "nobody"'],
      [["jobs", "list", "--status", "done"], '--status "done": use active, queued, running, completed, failed, cancelled, all'],
      [["jobs", "list", "--limit", "0"], '--limit "0"'],
      [["jobs", "list", "--limit", "5000"], '--limit "5000"'],
      [["jobs", "list", "--plan", "pro"], "jobs list does not take --plan"],
      [["jobs", "cancel", "crawl_x", "--status", "all"], "jobs cancel does not take --status"],
      [["jobs"], '"jobs" needs a subcommand: jobs list, jobs cancel'],
      [["jobs", "stop"], 'unknown subcommand "jobs stop"'],
    ];
    for (const [args, message] of cases) {
      const r = cli(args, env);
      expect([args, r.status, r.stdout], r.stderr).toEqual([args, 2, ""]);
      expect(r.stderr).toContain(message);
    }
    const none = cli(["jobs", "list", "--status", "all"], env);
    expect([none.status, none.stdout]).toEqual([0, "No jobs.\n"]);
    expect(JSON.parse(cli(["jobs", "list", "--account", "acme", "--json"], env).stdout)).toEqual({ status: "active", account: "acme", limit: 100, more: false, jobs: [] });
  }, 60_000);
});

describe("the CLI beside a running server (SQLite)", () => {
  it("opening the storage leaves the server's work in progress alone: its claimed pages and its webhook attempts stay held", async () => {
    const env = { QUARRY_DATA_DIR: tempDataDir() };
    createKeyCli(env, "acme", "scrape");
    // What a server at work holds, written to the file as a store that claims in the file does.
    const db = new Database(join(env.QUARRY_DATA_DIR, "quarry.db"));
    cleanup.push(async () => db.close());
    const store = new SqlJobStore(sqliteDriver(db as unknown as SyncSqlite));
    await store.init(false);
    const job = jobRecord({ account: "acme" });
    const task = { jobId: job.id, url: "http://x.test/", depth: 0 };
    await store.create(job, [task], []);
    const now = Date.now();
    expect(await store.claim(task, now, 60_000)).toBe(true);
    await store.addDelivery({ id: "d1", jobId: job.id, event: "started", body: "{}", attempt: 0, nextAt: now }, now + 60_000);
    const held = () => [
      db.prepare("SELECT state, lease_until FROM quarry_frontier WHERE job_id = ?").get(job.id),
      db.prepare("SELECT lease_until FROM quarry_webhooks WHERE id = 'd1'").get(),
    ];
    const before = held();
    expect(before).toEqual([{ state: "active", lease_until: now + 60_000 }, { lease_until: now + 60_000 }]);
    for (const args of [["jobs", "list", "--json"], ["keys", "list", "--account", "acme"], ["jobs", "cancel", "crawl_01ARZ3NDEKTSV4RRFFQ69G5FAV"]]) {
      cli(args, env);
      expect(held(), args.join(" ")).toEqual(before);
    }
  }, 60_000);
});
