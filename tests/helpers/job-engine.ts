/** For tests that drive the job engine in process: a crawl's spec, and waiting on a job's record. */
import type { JobRecord, JobSpec } from "../../core/ports/job-model.ts";

/** A crawl of up to 300 pages, 10 links deep, from `url`, as the engine tests run it. */
export const crawlSpec = (url: string, over: Partial<JobSpec> = {}): JobSpec => ({
  url, limit: 300, maxDepth: 10, includePaths: [], excludePaths: [], allowSubdomains: false, allowExternal: false,
  respectRobots: true, formats: ["markdown"], onlyMainContent: true, timeoutMs: 1000, webhook: null, ...over,
});

/** Reads the job every 50 ms until `done` holds or `ms` have passed; returns the last record read. */
export async function untilJob(read: () => Promise<JobRecord | null>, done: (j: JobRecord) => boolean, ms: number): Promise<JobRecord> {
  const end = Date.now() + ms;
  for (;;) {
    const j = (await read())!;
    if (done(j) || Date.now() > end) return j;
    await new Promise((r) => setTimeout(r, 50));
  }
}
