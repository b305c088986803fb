/**
 * Two `quarry serve` processes share a crawl through one PostgreSQL (in one run with Redis too);
 * one of them gets SIGTERM in the middle of it, while a slow scrape holds its drain open for 3 s.
 * The stopping one starts no page from the signal on (the test site tells the two apart by who
 * opened each connection), gives back what it had not started, exits 0, and the other one
 * finishes the crawl at once: every page fetched, recorded and counted exactly once. Also: a page
 * under way at the signal (finished there, or cut at 10 s and handed over), and webhook deliveries
 * waiting for a retry (left to the other one).
 */
import { createServer } from "node:http";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { allPages, json, waitFor, type Job } from "../helpers/job-http.ts";
import { tempDatabase } from "../helpers/pg.ts";
import { PrivateRedis } from "../helpers/private-services.ts";
import { createKeyCli, startServer, type Server } from "../helpers/server.ts";
import { connectionOwner } from "../helpers/socket-owner.ts";
import { PAGE_TIMEOUT_MS, sitePagePaths, startTestSite, type TestSite } from "../helpers/test-site.ts";

const modes = [
  { name: "PostgreSQL alone", redis: false },
  { name: "PostgreSQL + Redis", redis: true },
];
// Redirect hops belong to the fetch that met them (/old → /older → /docs/moved).
const HOPS = ["/older", "/docs/moved"];
const FINISHED = ["completed", "failed", "cancelled"];
/**
 * A request the stopping instance began just before its signal handler ran may reach the site a moment
 * later (seen there after the handler's log time): 400 ms on a loaded machine. Pages (0.1 s apart) and
 * webhook retries (falling due all through the 3 s drain) that went on past it would still be seen.
 */
const GRACE_MS = 400;

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => {});
  cleanup = [];
});

/**
 * The test site, a temporary database (and a private Redis) and the environment of the instances;
 * `start(name)` starts one, and the site names the sender of each request by it.
 */
async function setUp(withRedis: boolean) {
  const named: Array<{ name: string; server: Server }> = [];
  const whose = (clientPort: number, serverPort: number) => {
    const pid = connectionOwner(clientPort, serverPort, named.map((n) => n.server.proc.pid!));
    return named.find((n) => n.server.proc.pid === pid)?.name;
  };
  const site: TestSite = await startTestSite({ crawlDelay: 0.1, whose });
  cleanup.push(() => site.close());
  const db = await tempDatabase("drain");
  cleanup.push(() => db.drop());
  const redis = withRedis ? await PrivateRedis.start() : null;
  if (redis) cleanup.push(() => redis.down());
  const env = {
    QUARRY_DATABASE_URL: db.url,
    ...(redis ? { QUARRY_REDIS_URL: redis.url } : {}),
    QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
    QUARRY_IP_RATE: "off",
    QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":100000}}',
    QUARRY_LOG_LEVEL: "debug",
    QUARRY_CRAWL_CONCURRENCY: "2",
    // A page the stopping instance kept (or lost) would come back only after this, long after the crawl's end.
    QUARRY_JOB_RECOVERY: "60s",
  };
  cleanup.push(() => Promise.all(named.map((n) => n.server.stop("SIGKILL"))));
  const start = async (name: string) => {
    const server = await startServer("node", env);
    named.push({ name, server });
    return server;
  };
  return { site, env, start, whose, db, named, key: () => createKeyCli(env, "acme", "scrape").key };
}

/**
 * What a failed wait shows: the job's entries not yet done, their queue tasks, and every log line
 * naming their URLs (which instance held each, and what it did with it).
 */
async function unfinished(dbUrl: string, jobId: string, named: Array<{ name: string; server: Server }>): Promise<string> {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  try {
    const { rows: entries } = await c.query("SELECT url, depth, state, lease_until FROM quarry_frontier WHERE job_id = $1 AND state NOT IN ('done', 'failed', 'skipped')", [jobId]);
    const { rows: slots } = await c.query("SELECT * FROM quarry_host_slots");
    const lines = [`now ${Date.now()}`, `host slots: ${JSON.stringify(slots)}`, ...entries.map((e) => JSON.stringify(e))];
    for (const e of entries) {
      const { rows } = await c.query("SELECT state, retry_count, created_on, started_on, completed_on, start_after FROM pgboss.job WHERE data->>'jobId' = $1 AND data->>'url' = $2", [jobId, e.url]);
      lines.push(`  tasks: ${JSON.stringify(rows)}`);
      for (const n of named) for (const l of n.server.output().split("\n")) if (l.includes(e.url)) lines.push(`  ${n.name}: ${l}`);
    }
    return lines.join("\n");
  } finally {
    await c.end();
  }
}

/** SIGTERM to `server`: its exit code, when the signal was sent and when the process had exited. */
async function sigterm(server: Server): Promise<{ code: number | null; signalledAt: number; stoppedAt: number }> {
  const signalledAt = Date.now();
  const code = await server.stop("SIGTERM");
  return { code, signalledAt, stoppedAt: Date.now() };
}

describe.each(modes)("SIGTERM to one of two instances in the middle of a shared crawl ($name)", ({ redis: withRedis }) => {
  it("the stopping one fetches no page after the signal and exits 0; the other finishes the crawl at once, every page once", async () => {
    const { site, start, db, named, key: newKey } = await setUp(withRedis);
    const [stopping, other] = await Promise.all([start("stopped"), start("other")]);
    const key = newKey();

    // Links only (no sitemap): pages are found as the crawl goes, so it is still under way when the signal comes.
    const started = await json(`${other.url}/v1/crawl`, key, { method: "POST", body: JSON.stringify({ url: `${site.ipUrl}/`, max_depth: 10, limit: 300, timeout_ms: PAGE_TIMEOUT_MS, sitemap: "skip" }) });
    expect(started.id).toMatch(/^crawl_/);
    const statusUrl = `${other.url}/v1/crawl/${started.id}`;
    const recordedBy = (s: Server) => (s.output().match(new RegExp(`"job_id":"${started.id}"[^\\n]*job page recorded`, "g")) ?? []).length;
    // Mid-crawl: the one to stop has recorded pages of its own, and the job is far from done.
    let job: Job = {};
    for (const end = Date.now() + 60_000; Date.now() < end; ) {
      job = await json(statusUrl, key);
      if (FINISHED.includes(job.status) || (recordedBy(stopping) >= 3 && job.completed >= 8)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(job.status).toBe("running");

    // A scrape of a page that never answers holds the stopping one's drain for its 3 s.
    const held = fetch(`${stopping.url}/v1/scrape`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ url: `${site.ipUrl}/slow?held`, timeout_ms: 3000 }) }).catch(() => null);
    // The held page is under way before the signal (on a loaded machine the request takes a while to get there).
    for (const end = Date.now() + 15_000; !site.hits.some((h) => h.path === "/slow?held") && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
    expect(site.hits.some((h) => h.path === "/slow?held")).toBe(true);
    const { code, signalledAt, stoppedAt } = await sigterm(stopping);
    await held;
    const out = stopping.output();
    expect(code, out.slice(-3000)).toBe(0);
    expect(stoppedAt - signalledAt).toBeGreaterThan(2000); // the scrape did hold the drain
    expect(stoppedAt - signalledAt).toBeLessThan(8000);
    expect(out).not.toMatch(/did not finish within 10 s|pg-boss shut down while active|job task failed|could not/);

    // Not one page started by the stopping instance once it had the signal (its log line's time;
    // a request it had begun just before may reach the site, and be seen there, a moment later).
    const stopLine = out.split("\n").find((l) => l.includes("quarry stopping"))!;
    const handledAt = Date.parse(JSON.parse(stopLine).time);
    expect(handledAt).toBeGreaterThanOrEqual(signalledAt - 5);
    const late = site.hits.filter((h) => h.by === "stopped" && h.start > handledAt + GRACE_MS && !HOPS.includes(h.path));
    expect(late.map((h) => `${h.path} +${h.start - handledAt}ms`)).toEqual([]);
    // The site knew who sent each request: the test would prove nothing otherwise.
    const pageHits = site.hits.filter((h) => h.path !== "/robots.txt" && h.path !== "/slow?held");
    expect(pageHits.every((h) => h.by === "stopped" || h.by === "other"), JSON.stringify(pageHits.filter((h) => !h.by))).toBe(true);
    expect(pageHits.some((h) => h.by === "stopped" && h.start < signalledAt)).toBe(true);

    // The other one goes on with what the stopping one gave back, without waiting for a lease or a retry delay to run out.
    job = await waitFor(statusUrl, key, (j) => FINISHED.includes(j.status), 60_000);
    const doneAfter = Date.now() - signalledAt;
    expect(job.status, job.status === "running" ? await unfinished(db.url, started.id, named) : "").toBe("completed");
    // The rest of the crawl takes about 15 s: well before any page held by the stopped one could come back.
    expect(doneAfter).toBeLessThan(40_000);
    const pages = await allPages(job, other.url, key);
    const paths = pages.map((p) => new URL(p.url).pathname + new URL(p.url).search);
    expect(new Set(paths).size).toBe(paths.length);
    for (const p of sitePagePaths()) expect(paths.filter((x) => x === p), p).toHaveLength(1);
    // Fetched once each, by one instance or the other.
    const fetched = new Map<string, number>();
    for (const h of pageHits) fetched.set(h.path, (fetched.get(h.path) ?? 0) + 1);
    expect([...fetched].filter(([, n]) => n > 1)).toEqual([]);
    // Counted once each: every unit the stopping one held was settled or given back before it exited.
    const usage = await json(`${other.url}/v1/usage`, key);
    expect(usage.endpoints.crawl).toBe(job.completed);
    // The host limit held for the two together (the held scrape is not the crawl's).
    const crawlHits = site.hits.filter((h) => h.path !== "/slow?held");
    const inFlight = (t: number) => crawlHits.filter((b) => b.start <= t && (b.end === 0 || b.end > t)).length;
    expect(Math.max(...crawlHits.map((h) => inFlight(h.start)))).toBeLessThanOrEqual(2);
  }, 180_000);
});

describe("SIGTERM to an instance while it reads a slow page of a shared crawl", () => {
  // One page a crawl (max_depth 0), read by the instance that was alone when the job began; the
  // next one starts while it reads, and then the reading one gets SIGTERM.
  it("lets a page that answers within 10 s finish and records it, fetched once; cuts one that does not and hands it over at once", async () => {
    const { site, start, key: newKey } = await setUp(false);
    const key = newKey();
    const hitsOf = (path: string) => site.hits.filter((h) => h.path === path);
    const waitForHit = async (path: string) => {
      for (const end = Date.now() + 20_000; !hitsOf(path).length && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
      expect(hitsOf(path)).toHaveLength(1);
    };

    // A page answering 6 s after its request began, the signal about 2.5 s into it.
    const first = await start("first");
    const late = await json(`${first.url}/v1/crawl`, key, { method: "POST", body: JSON.stringify({ url: `${site.ipUrl}/late?ms=6000`, max_depth: 0, timeout_ms: 15_000 }) });
    await waitForHit("/late?ms=6000");
    const second = await start("second");
    const a = await sigterm(first);
    expect(a.code, first.output().slice(-3000)).toBe(0);
    const answeredAt = hitsOf("/late?ms=6000")[0]!.end;
    // It stopped once the page had answered and was recorded: not before, and not at the 10 s cut.
    expect(a.stoppedAt).toBeGreaterThanOrEqual(answeredAt);
    expect(a.stoppedAt - a.signalledAt).toBeLessThan(9000);
    const lateJob = await waitFor(`${second.url}/v1/crawl/${late.id}`, key, (j) => FINISHED.includes(j.status), 20_000);
    expect(lateJob.status).toBe("completed");
    expect(lateJob.completed).toBe(1);
    expect(lateJob.data.map((p: Job) => new URL(p.url).pathname + new URL(p.url).search)).toEqual(["/late?ms=6000"]);
    expect(hitsOf("/late?ms=6000").map((h) => h.by)).toEqual(["first"]);

    // A page that never answers: the stopping instance gives up on it 10 s after the signal and
    // the queue hands it to the other one at once (not after QUARRY_JOB_RECOVERY, 30 s).
    const slow = await json(`${second.url}/v1/crawl`, key, { method: "POST", body: JSON.stringify({ url: `${site.ipUrl}/slow`, max_depth: 0, timeout_ms: 20_000 }) });
    await waitForHit("/slow");
    const third = await start("third");
    const b = await sigterm(second);
    expect(b.code, second.output().slice(-3000)).toBe(0);
    expect(b.stoppedAt - b.signalledAt).toBeGreaterThan(9500);
    expect(b.stoppedAt - b.signalledAt).toBeLessThan(13_000);
    expect(second.output()).not.toMatch(/pg-boss shut down while active|job task failed/);
    for (const end = Date.now() + 10_000; hitsOf("/slow").length < 2 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    const slowHits = hitsOf("/slow");
    expect(slowHits.map((h) => h.by)).toEqual(["second", "third"]);
    expect(slowHits[1]!.start - b.stoppedAt).toBeLessThan(3000);
    // Read by the third to its own timeout: recorded once, as a page that timed out.
    const slowJob = await waitFor(`${third.url}/v1/crawl/${slow.id}`, key, (j) => FINISHED.includes(j.status), 40_000);
    expect(slowJob.status).toBe("failed");
    expect(slowJob.failed).toBe(1);
    expect(slowJob.data).toHaveLength(1);
  }, 180_000);
});

describe("SIGTERM to one of two instances while webhook deliveries wait for a retry", () => {
  it("the stopping one takes none of them from the signal on; the other delivers every one", async () => {
    const { site, start, whose, key: newKey } = await setUp(false);
    // The receiver refuses every delivery until told otherwise, so they wait in the store for their retries (1 s, 2 s, 4 s, 8 s).
    let accept = false;
    const got: Array<{ id: string; type: string; by: string | undefined; at: number; status: number }> = [];
    const receiver = createServer((req, res) => {
      const at = Date.now(); // when the delivery arrived, not when its body was read
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        const status = accept ? 204 : 503;
        got.push({ id: String(req.headers["x-quarry-delivery"]), type: String(JSON.parse(body).type), by: (req.socket as { by?: string }).by, at, status });
        res.writeHead(status).end();
      });
    });
    receiver.on("connection", (socket) => ((socket as { by?: string }).by = whose(socket.remotePort ?? 0, socket.localPort ?? 0)));
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    cleanup.push(() => new Promise((r) => (receiver.closeAllConnections(), receiver.close(r))));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const [stopping, other] = await Promise.all([start("stopped"), start("other")]);
    const key = newKey();
    const urls = ["/about", "/contact", "/docs/", "/guides/", "/blog/", "/docs/intro"].map((p) => site.ipUrl + p);
    const batch = await json(`${other.url}/v1/batch/scrape`, key, { method: "POST", body: JSON.stringify({ urls, webhook: { url: hookUrl } }) });
    expect(batch.id).toMatch(/^batch_/);
    // started, a page each, completed: 8 deliveries, each refused at least once, and the batch done.
    const ids = () => new Set(got.map((g) => g.id));
    for (const end = Date.now() + 20_000; ids().size < 8 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    expect(ids().size).toBe(8);

    const held = fetch(`${stopping.url}/v1/scrape`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ url: `${site.ipUrl}/slow?held`, timeout_ms: 3000 }) }).catch(() => null);
    // The held page is under way before the signal (on a loaded machine the request takes a while to get there).
    for (const end = Date.now() + 15_000; !site.hits.some((h) => h.path === "/slow?held") && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
    expect(site.hits.some((h) => h.path === "/slow?held")).toBe(true);
    const { code, signalledAt } = await sigterm(stopping);
    await held;
    const out = stopping.output();
    expect(code, out.slice(-3000)).toBe(0);
    const handledAt = Date.parse(JSON.parse(out.split("\n").find((l) => l.includes("quarry stopping"))!).time);
    expect(handledAt).toBeGreaterThanOrEqual(signalledAt - 5);
    accept = true;

    // Retries fell due all through its 3 s drain; the stopping one made none of them.
    const late = got.filter((g) => g.by === "stopped" && g.at > handledAt + GRACE_MS);
    expect(late.map((g) => `${g.type} +${g.at - handledAt}ms`)).toEqual([]);
    expect(got.every((g) => g.by === "stopped" || g.by === "other")).toBe(true);
    expect(got.filter((g) => g.at > handledAt && g.at < handledAt + 3000).length).toBeGreaterThan(0);
    // Every delivery is made once the receiver takes them, by the other one (60 s: retries back off, and a loaded machine is slow).
    for (const end = Date.now() + 60_000; Date.now() < end; ) {
      if ([...ids()].every((id) => got.some((g) => g.id === id && g.status === 204))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const accepted = got.filter((g) => g.status === 204);
    expect(accepted.map((g) => g.id).sort()).toEqual([...ids()].sort());
    expect(accepted.every((g) => g.by === "other")).toBe(true);
    expect(accepted.map((g) => g.type).sort()).toEqual(["batch.completed", ...Array(6).fill("batch.page"), "batch.started"].sort());
  }, 120_000);
});
