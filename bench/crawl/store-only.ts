/**
 * bench/crawl/store-only.ts: the crawl's bookkeeping alone, on embedded SQLite, without fetching
 * or extracting: every page of the bench site's tree (bench/crawl/run.ts) claimed, recorded with
 * its links and a 2.5 KB markdown, and its quota unit committed, as a crawl job does, with pages
 * handed to the store `--group` at a time (how many finish together and share a transaction).
 * Prints CPU µs per page (this process, one thread doing the work): steadier than a whole crawl's
 * figures for comparing store changes on a loaded machine.
 *
 *   npx tsx bench/crawl/store-only.ts [--pages 2000] [--group 1] [--runs 3]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqlJobStore } from "../../adapters/jobs/sql-store.ts";
import { sqliteDriver } from "../../adapters/jobs/sql-drivers.ts";
import { openSqlite } from "../../adapters/shared/sqlite.ts";
import { SqliteCounters } from "../../adapters/storage/sqlite-counters.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";
import type { JobRecord, JobTask } from "../../core/ports/job-model.ts";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const PAGES = arg("pages", 2000);
const GROUP = arg("group", 1);
const RUNS = arg("runs", 3);
const SITE = "http://127.0.0.1:8000";
const MARKDOWN = "quarry crawl page site section index archive guide reference manual ".repeat(36);

async function once(): Promise<{ cpuUs: number }> {
  const dir = mkdtempSync(join(tmpdir(), "quarry-bench-store-"));
  const sqlite = await openSqlite(dir, nodeRuntime.sqlite);
  try {
    const store = new SqlJobStore(sqliteDriver(sqlite.sync));
    await store.init(true);
    const counters = new SqliteCounters(sqlite.sync);
    const now = Date.now();
    const job: JobRecord = {
      id: "crawl_bench", kind: "crawl", account: "bench", keyId: "k", status: "queued", createdAt: now, finishedAt: null, deadlineAt: now + 3_600_000,
      expiresAt: null, discovered: 1, completed: 0, failed: 0, skipped: 0, stoppedReason: null,
      spec: { url: `${SITE}/p/0`, limit: PAGES, maxDepth: 10, includePaths: [], excludePaths: [], allowSubdomains: false, allowExternal: false, respectRobots: true, formats: ["markdown"], onlyMainContent: true, timeoutMs: 15_000, webhook: null },
    };
    const queue: JobTask[] = [{ jobId: job.id, url: `${SITE}/p/0`, depth: 0 }];
    await store.create(job, queue.slice(), []);
    const cpu0 = process.cpuUsage();
    let head = 0;
    while (head < queue.length) {
      const batch = queue.slice(head, head + GROUP);
      head += batch.length;
      await Promise.all(batch.map(async (task) => {
        if (!(await store.claim(task, Date.now(), 120_000))) return;
        const admitted = await counters.admit({ keyId: "k", now: Date.now(), perMinute: 1e9, windowMs: 60_000, period: "2026-11", group: "crawl", quota: null, window: false });
        const i = Number(task.url.slice(task.url.lastIndexOf("/") + 1));
        // The page's links as the job hands them to the store: its children, and the menu the job already knows.
        const found = Array.from({ length: 10 }, (_, k) => 10 * i + k + 1).filter((c) => c < PAGES).map((c) => ({ jobId: job.id, url: `${SITE}/p/${c}`, depth: task.depth + 1 }));
        const page = { url: task.url, ok: true, statusCode: 200, title: `Page ${i}`, data: { final_url: task.url, content_type: "text/html; charset=utf-8", rendered: false, title: `Page ${i}`, markdown: MARKDOWN }, error: null };
        const res = await store.finish(task, page, found, [], Date.now());
        if (admitted.ok && admitted.ticket) await (res.recorded ? counters.commit(admitted.ticket) : counters.release(admitted.ticket));
        queue.push(...res.added);
      }));
    }
    const { user, system } = process.cpuUsage(cpu0);
    if (head !== PAGES) throw new Error(`recorded ${head} pages, not ${PAGES}`);
    return { cpuUs: (user + system) / PAGES };
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = [];
for (let r = 0; r < RUNS; r++) results.push(await once());
const cpu = results.map((r) => r.cpuUs).sort((a, b) => a - b);
console.log(`group ${GROUP}: CPU µs per page ${cpu.map((x) => x.toFixed(0)).join(", ")} (median ${cpu[Math.floor(cpu.length / 2)]!.toFixed(0)})`);
