/**
 * A crawl across a storage outage: the store or the counters fail for a while (a full disk, a
 * lost database or Redis), then come back. The job must go on by itself and read every page once,
 * with the in-process queue (SQLite, one server) and with a shared queue that, like pg-boss, gives
 * up on a task after a few retries. Before, the pages whose tasks failed stayed unread until a
 * restart (in-process queue) or until the job's deadline (shared queue, even across restarts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { MemoryJobStore } from "../../adapters/jobs/memory-store.ts";
import { memoryPorts } from "../../adapters/shared/bootstrap.ts";
import { parseConfig } from "../../core/config.ts";
import { StorageError } from "../../core/errors.ts";
import { JobEngine } from "../../core/jobs/engine.ts";
import { readJobPage } from "../../core/pages/page-data.ts";
import type { JobRecord, JobTask } from "../../core/ports/job-model.ts";
import type { JobQueue } from "../../core/ports/jobs.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { FakeClock } from "../helpers/clock.ts";
import { crawlSpec, untilJob } from "../helpers/job-engine.ts";
import { siteResolver, startTestSite, type TestSite } from "../helpers/test-site.ts";

let site: TestSite;
beforeAll(async () => {
  site = await startTestSite({ crawlDelay: 0.02 });
});
afterAll(async () => {
  await site?.close();
});

/** Like pg-boss: a task that throws is retried twice after 50 ms, then given up. */
class GivingUpQueue implements JobQueue {
  private handle: ((t: JobTask) => Promise<void>) | null = null;
  async push(tasks: JobTask[]): Promise<void> {
    for (const t of tasks) this.run(t, 0);
  }
  private run(task: JobTask, attempt: number): void {
    if (!this.handle) return;
    this.handle(task).catch(() => {
      if (attempt < 2) setTimeout(() => this.run(task, attempt + 1), 50);
    });
  }
  async start(handle: (t: JobTask) => Promise<void>): Promise<void> {
    this.handle = handle;
  }
  async stop(): Promise<void> {
    this.handle = null;
  }
}

function setup(shared: boolean) {
  const down = { store: false, counters: false };
  const store = new MemoryJobStore();
  const finish = store.finish.bind(store);
  store.finish = (...a) => (down.store ? Promise.reject(new StorageError("SQLite: database or disk is full")) : finish(...a));
  const active = store.active.bind(store);
  store.active = () => (down.store ? Promise.reject(new StorageError("SQLite: database or disk is full")) : active());
  const clock = new FakeClock();
  clock.now = () => Date.now();
  const logger = new MemoryLogger();
  const pages = createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]), resolver: siteResolver });
  const ports = memoryPorts(logger, clock, pages);
  const admit = ports.counters.admit.bind(ports.counters);
  ports.counters.admit = (r) => (down.counters ? Promise.reject(new StorageError("Redis: connection lost")) : admit(r));
  ports.jobs = { store, ...(shared ? { queue: new GivingUpQueue() } : {}) };
  const config = parseConfig({ QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_JOB_RECOVERY: "1s", QUARRY_PLANS: '{"free":{"quota":10000,"per_minute":10000}}' }, "test");
  const engine = new JobEngine(ports, config, (req) => readJobPage(ports, req), { watchdogMs: 100 });
  return { engine, down, logger, store };
}

const over = (j: JobRecord) => !["queued", "running"].includes(j.status);

describe.each([
  ["the in-process queue, the store failing (a full disk)", false, "store"],
  ["the in-process queue, the counters failing", false, "counters"],
  ["a shared queue that gives up on tasks, the counters failing (Redis down)", true, "counters"],
  ["a shared queue that gives up on tasks, the store failing", true, "store"],
] as const)("a crawl across an outage: %s", (_name, shared, part) => {
  it("goes on by itself when the outage ends and reads every page once", async () => {
    const { engine, down, logger, store } = setup(shared);
    await engine.start();
    const job = await engine.create({ account: "acme", keyId: "k1" }, "crawl", crawlSpec(`${site.ipUrl}/`), [`${site.ipUrl}/`]);
    await untilJob(() => engine.job(job.id), (j) => j.completed >= 5 || over(j), 30_000);
    down[part] = true;
    // Long enough for every task under way to fail and the shared queue to give up on them.
    await new Promise((r) => setTimeout(r, 700));
    down[part] = false;
    const end = await untilJob(() => store.get(job.id), over, 30_000);
    expect(end.status).toBe("completed");
    expect(end.completed + end.failed).toBe(end.discovered);
    const pages = await store.pages(job.id, 0, 1000);
    expect(pages).toHaveLength(end.discovered);
    expect(new Set(pages.map((p) => p.url)).size).toBe(pages.length);
    expect(pages.length).toBeGreaterThan(30);
    // Failures are logged, not one line per page and attempt.
    const failures = logger.lines.filter((l) => String(l.msg).startsWith("job task failed"));
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.length).toBeLessThanOrEqual(2);
    // The watchdog (every 100 ms here) says it cannot reach the store once, and once that it can.
    if (part === "store") {
      expect(logger.lines.filter((l) => String(l.msg).startsWith("job watchdog failed"))).toHaveLength(1);
      expect(logger.lines.filter((l) => l.msg === "job watchdog working again")).toHaveLength(1);
    }
    await engine.stop();
  }, 60_000);
});
