/**
 * A job's SSE streams are woken when the job ends in this process (core/jobs/changes.ts), so a
 * client following it sees the end as soon as it is stored, not at the stream's next poll. And a
 * job with pages to read gets the extractor started when it is accepted.
 */
import { describe, expect, it } from "vitest";
import { memoryPorts } from "../../adapters/shared/bootstrap.ts";
import { parseConfig } from "../../core/config.ts";
import { JobChanges } from "../../core/jobs/changes.ts";
import { JobEngine } from "../../core/jobs/engine.ts";
import { readJobPage } from "../../core/pages/page-data.ts";
import type { JobSpec } from "../../core/ports/job-model.ts";
import type { Ports } from "../../core/ports.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { FakeClock } from "../helpers/clock.ts";

const HOUR = 3_600_000;
const settled = (p: Promise<unknown>) => Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), 50))]);

describe("JobChanges", () => {
  it("wakes the job's waiters at once, and only that job's", async () => {
    const changes = new JobChanges();
    const a = changes.next("a", HOUR);
    const a2 = changes.next("a", HOUR);
    const b = changes.next("b", HOUR);
    changes.changed("a");
    expect(await settled(a)).toBe(true);
    expect(await settled(a2)).toBe(true);
    expect(await settled(b)).toBe(false);
    expect(changes.size).toBe(1);
    changes.changed("b");
    await b;
    expect(changes.size).toBe(0);
  });

  it("resolves after its time when nothing changes, and forgets the waiter", async () => {
    const changes = new JobChanges();
    const t0 = Date.now();
    await changes.next("a", 30);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(25);
    expect(changes.size).toBe(0);
    changes.changed("a"); // nobody left to wake: no error
  });
});

const spec: JobSpec = {
  url: "https://example.org/", limit: 10, maxDepth: 1, includePaths: [], excludePaths: [], allowSubdomains: false, allowExternal: false,
  respectRobots: true, formats: ["markdown"], onlyMainContent: true, timeoutMs: 1000, webhook: null,
};

function engineWith(over: Partial<Ports> = {}): JobEngine {
  const clock = new FakeClock();
  clock.now = () => Date.now();
  const ports = { ...memoryPorts(new MemoryLogger(), clock), ...over };
  return new JobEngine(ports, parseConfig({}, "test"), (req) => readJobPage(ports, req));
}

describe("the engine", () => {
  it("wakes a job's followers when the job ends", async () => {
    const engine = engineWith();
    // Not started: the job stays queued, its page never fetched.
    const job = await engine.create({ account: "acme", keyId: "k1" }, "crawl", spec, ["https://example.org/"]);
    const woken = engine.changes.next(job.id, HOUR);
    expect(await settled(woken)).toBe(false);
    await engine.cancel(job.id);
    expect(await settled(woken)).toBe(true);
    expect(engine.changes.size).toBe(0);
    await engine.stop();
  });

  it("warms the extractor when it accepts a job with pages to read, and not for one without", async () => {
    let warmed = 0;
    const engine = engineWith({ extract: { extract: () => Promise.reject(new Error("not here")), warm: () => void warmed++ } });
    // Not started: nothing is fetched.
    await engine.create({ account: "acme", keyId: "k1" }, "crawl", spec, ["https://example.org/"]);
    expect(warmed).toBe(1);
    // Only a private address: skipped at once, no page to read.
    const none = await engine.create({ account: "acme", keyId: "k1" }, "batch", { ...spec, url: null }, ["http://10.0.0.1/"]);
    expect(none.discovered).toBe(0);
    expect(warmed).toBe(1);
    await engine.stop();
  });
});
