/**
 * The job engine with a shared queue, stopped in the middle of a crawl whose tasks wait for their
 * host's turn (Crawl-delay): every task it had and did not finish is handed back to the queue, so
 * nothing is left pending in the store without a task to read it. Paused first (a server's SIGTERM),
 * it hands them back at once and starts no page request; stopped without a pause (an embedder's
 * stop(), a start-up abandoned for a taken port), it hands them back as it stops. Either way a
 * second engine on the same store and queue finishes the crawl with every page once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { MemoryJobStore } from "../../adapters/jobs/memory-store.ts";
import { memoryPorts } from "../../adapters/shared/bootstrap.ts";
import { parseConfig } from "../../core/config.ts";
import { JobEngine } from "../../core/jobs/engine.ts";
import { readJobPage } from "../../core/pages/page-data.ts";
import type { JobTask } from "../../core/ports/job-model.ts";
import type { JobQueue, TaskOutcome } from "../../core/ports/jobs.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { FakeClock } from "../helpers/clock.ts";
import { crawlSpec, untilJob } from "../helpers/job-engine.ts";
import { sitePagePaths, siteResolver, startTestSite, type TestSite } from "../helpers/test-site.ts";

let site: TestSite;
beforeAll(async () => {
  site = await startTestSite({ crawlDelay: 0.15 });
});
afterAll(async () => {
  await site?.close();
});

/** Like pg-boss, in memory: tasks wait until a worker takes them; one handed back waits again, one worked is gone. */
class SharedQueue implements JobQueue {
  waiting: JobTask[] = [];
  handedBack = 0;
  private handle: ((t: JobTask) => Promise<TaskOutcome | void>) | null = null;
  private busy = 0;
  private concurrency = 0;
  private idle: Array<() => void> = [];
  async push(tasks: JobTask[]): Promise<void> {
    this.waiting.push(...tasks);
    this.pump();
  }
  async start(handle: (t: JobTask) => Promise<TaskOutcome | void>, concurrency: number): Promise<void> {
    this.handle = handle;
    this.concurrency = concurrency;
    this.pump();
  }
  private pump(): void {
    while (this.handle && this.busy < this.concurrency && this.waiting.length) {
      const task = this.waiting.shift()!;
      this.busy++;
      void this.handle(task)
        .then(
          (outcome) => {
            if (outcome !== "handed_back") return;
            this.handedBack++;
            this.waiting.push(task);
          },
          () => this.waiting.push(task), // failed: retried later, as pg-boss does
        )
        .finally(() => {
          this.busy--;
          if (this.busy === 0) for (const r of this.idle.splice(0)) r();
          this.pump();
        });
    }
  }
  async stop(): Promise<void> {
    this.handle = null;
    if (this.busy) await new Promise<void>((r) => this.idle.push(r));
  }
}

function engineOn(store: MemoryJobStore, queue: SharedQueue) {
  const clock = new FakeClock();
  clock.now = () => Date.now();
  const pages = createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]), resolver: siteResolver });
  const ports = memoryPorts(new MemoryLogger(), clock, pages);
  ports.jobs = { store, queue };
  const config = parseConfig({ QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_CRAWL_CONCURRENCY: "6", QUARRY_PLANS: '{"free":{"quota":10000,"per_minute":10000}}' }, "test");
  return new JobEngine(ports, config, (req) => readJobPage(ports, req), { watchdogMs: 100 });
}

describe.each([
  ["paused, then stopped (SIGTERM)", true],
  ["stopped without a pause (an embedder's stop)", false],
] as const)("a shared-queue engine %s while its tasks wait for their host's turn", (_name, paused) => {
  it("hands back every task it did not finish; another engine finishes the crawl, every page once", async () => {
    const store = new MemoryJobStore();
    const queue = new SharedQueue();
    const first = engineOn(store, queue);
    await first.start();
    const job = await first.create({ account: "acme", keyId: "k1" }, "crawl", crawlSpec(`${site.ipUrl}/`), [`${site.ipUrl}/`]);
    // Several tasks under way at once, most of them waiting for the site's Crawl-delay.
    await untilJob(() => store.get(job.id), (j) => j.completed >= 3 && j.discovered - j.completed - j.failed >= 6, 30_000);
    if (paused) {
      const pausedAt = Date.now();
      first.pause();
      // At once, not when stop() comes: the tasks waiting for their turn are back in the queue.
      for (const end = Date.now() + 2000; queue.handedBack < 3 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
      expect(queue.handedBack).toBeGreaterThanOrEqual(3);
      await new Promise((r) => setTimeout(r, 500)); // three more Crawl-delay turns
      expect(site.hits.filter((h) => h.start > pausedAt + 20).map((h) => h.path)).toEqual([]);
    }
    await first.stop();
    // Nothing pending in the store without a task in the queue to read it.
    const unfinished = (await store.unfinished(1000)).map((t) => t.url).sort();
    expect(unfinished.length).toBeGreaterThan(0);
    const queued = new Set(queue.waiting.map((t) => t.url));
    expect(unfinished.filter((url) => !queued.has(url))).toEqual([]);

    const second = engineOn(store, queue);
    await second.start();
    const end = await untilJob(() => store.get(job.id), (j) => !["queued", "running"].includes(j.status), 60_000);
    await second.stop();
    expect(end.status).toBe("completed");
    const recorded = (await store.pages(job.id, 0, 1000)).map((p) => new URL(p.url).pathname + new URL(p.url).search);
    expect(new Set(recorded).size).toBe(recorded.length);
    for (const p of sitePagePaths()) expect(recorded.filter((x) => x === p), p).toHaveLength(1);
  }, 120_000);
});
