/** The JobStore contract (core/jobs/ports.ts), run against every implementation. */
import { expect, it } from "vitest";
import type { JobStore } from "../../core/ports.ts";
import type { JobRecord, PageResult } from "../../core/jobs/model.ts";

let n = 0;
export function jobRecord(over: Partial<JobRecord> = {}): JobRecord {
  const id = `crawl_${String(++n).padStart(26, "0")}`.slice(0, 32);
  return {
    id, kind: "crawl", account: "acme", keyId: "key_1", status: "queued", createdAt: 1000, finishedAt: null, deadlineAt: 10_000_000, expiresAt: null,
    discovered: 1, completed: 0, failed: 0, skipped: 0, stoppedReason: null,
    spec: { url: "http://x.test/", limit: 3, maxDepth: 3, includePaths: [], excludePaths: [], allowSubdomains: false, allowExternal: false, respectRobots: true, formats: ["markdown"], onlyMainContent: true, timeoutMs: 1000, webhook: null },
    ...over,
  };
}
const ok = (url: string): PageResult => ({ url, ok: true, statusCode: 200, title: "t", data: { markdown: "m" }, error: null });
const bad = (url: string): PageResult => ({ url, ok: false, statusCode: 404, title: null, data: {}, error: "http_404" });

/** `singleOwner`: claims live in the one process that owns the store (SQLite served by one server): no leases to run out. */
export function jobStoreContract(make: () => Promise<JobStore>, opts: { singleOwner?: boolean } = {}) {
  it("stores a job with its seeds and skips, and reads it back", async () => {
    const s = await make();
    const job = jobRecord();
    await s.create(job, [{ jobId: job.id, url: "http://x.test/", depth: 0 }], [{ url: "http://10.0.0.1/", reason: "url_not_allowed" }]);
    const got = await s.get(job.id);
    expect(got).toMatchObject({ id: job.id, status: "queued", discovered: 1, skipped: 1, spec: job.spec });
    expect(await s.skippedUrls(job.id, 10)).toEqual([{ url: "http://10.0.0.1/", reason: "url_not_allowed" }]);
    expect(await s.get("crawl_nope")).toBeNull();
  });

  it("claims an entry once and records its page once, adding new URLs up to the limit", async () => {
    const s = await make();
    const job = jobRecord();
    const seed = { jobId: job.id, url: "http://x.test/", depth: 0 };
    await s.create(job, [seed], []);
    expect(await s.claim(seed, 2000, 60_000)).toBe(true);
    expect(await s.claim(seed, 2001, 60_000)).toBe(false);
    const found = ["a", "b", "c", "a"].map((p) => ({ jobId: job.id, url: `http://x.test/${p}`, depth: 1 }));
    const r = await s.finish(seed, ok(seed.url), found, [{ url: "http://x.test/private/", reason: "robots_disallowed" }], 2002);
    expect(r.recorded).toBe(true);
    expect(r.added.map((t) => t.url)).toEqual(["http://x.test/a", "http://x.test/b"]);
    expect(r.limited).toBe(true);
    expect(r.remaining).toBe(2);
    expect((await s.finish(seed, ok(seed.url), [], [], 2003)).recorded).toBe(false);
    const after = await s.get(job.id);
    expect(after).toMatchObject({ status: "running", discovered: 3, completed: 1, failed: 0, skipped: 1, stoppedReason: "limit_reached" });
    const a = r.added[0]!;
    expect(await s.claim(a, 3000, 60_000)).toBe(true);
    const r2 = await s.finish(a, bad(a.url), [{ jobId: job.id, url: "http://x.test/", depth: 2 }], [], 3001);
    expect(r2).toMatchObject({ recorded: true, added: [], remaining: 1 });
    const pages = await s.pages(job.id, 0, 10);
    expect(pages.map((p) => [p.seq, p.url, p.ok, p.error])).toEqual([[1, "http://x.test/", true, null], [2, "http://x.test/a", false, "http_404"]]);
    expect(pages[0]!.data).toEqual({ markdown: "m" });
    expect((await s.pages(job.id, 1, 10)).map((p) => p.seq)).toEqual([2]);
    // Without what was read (an events stream's page events): the same pages, no content.
    const bare = await s.pages(job.id, 0, 10, false);
    expect(bare.map((p) => [p.seq, p.url, p.ok, p.statusCode, p.error])).toEqual(pages.map((p) => [p.seq, p.url, p.ok, p.statusCode, p.error]));
    expect(bare[0]!.data).toEqual({});
  });

  it("records pages that finish at the same moment each once, in one order, with the links they share added once", async () => {
    const s = await make();
    const job = jobRecord({ spec: { ...jobRecord().spec, limit: 100 } });
    const seeds = Array.from({ length: 6 }, (_, i) => ({ jobId: job.id, url: `http://x.test/s${i}`, depth: 0 }));
    await s.create(job, seeds, []);
    for (const t of seeds) expect(await s.claim(t, 10, 60_000)).toBe(true);
    const shared = { jobId: job.id, url: "http://x.test/shared", depth: 1 };
    const results = await Promise.all([
      ...seeds.map((t, i) => s.finish(t, i % 2 ? bad(t.url) : ok(t.url), [shared, { jobId: job.id, url: `http://x.test/own${i}`, depth: 1 }], [], 11)),
      s.finish(seeds[0]!, ok(seeds[0]!.url), [], [], 11), // the same page, handed out twice
    ]);
    expect(results.filter((r) => r.recorded)).toHaveLength(6);
    expect(results.flatMap((r) => r.added.map((a) => a.url)).filter((u) => u === shared.url)).toHaveLength(1);
    const pages = await s.pages(job.id, 0, 100);
    expect(pages.map((p) => p.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(new Set(pages.map((p) => p.url))).toEqual(new Set(seeds.map((t) => t.url)));
    expect(await s.get(job.id)).toMatchObject({ completed: 3, failed: 3, discovered: 6 + 1 + 6 });
    expect(Math.min(...results.filter((r) => r.recorded).map((r) => r.remaining))).toBe(7);
  });

  it("gives back released claims, lists unfinished work of active jobs only, and ends jobs conditionally", async () => {
    const s = await make();
    const job = jobRecord({ spec: { ...jobRecord().spec, limit: 10 } });
    const t = { jobId: job.id, url: "http://x.test/", depth: 0 };
    await s.create(job, [t, { jobId: job.id, url: "http://x.test/b", depth: 0 }], []);
    expect(await s.claim(t, 1, 60_000)).toBe(true);
    await s.release(t);
    expect(await s.claim(t, 2, 60_000)).toBe(true);
    expect((await s.unfinished(1000)).filter((u) => u.jobId === job.id).map((u) => u.url).sort()).toEqual(["http://x.test/", "http://x.test/b"]);
    expect(await s.active()).toContain(job.id);
    expect(await s.transition(job.id, ["queued", "running"], "cancelled", { finishedAt: 5, expiresAt: 50, stoppedReason: "cancelled" })).toBe(true);
    expect(await s.transition(job.id, ["queued", "running"], "completed", { finishedAt: 6 })).toBe(false);
    expect(await s.get(job.id)).toMatchObject({ status: "cancelled", finishedAt: 5, expiresAt: 50, stoppedReason: "cancelled" });
    expect((await s.finish(t, ok(t.url), [], [], 7)).recorded).toBe(false);
    expect((await s.unfinished(1000)).some((u) => u.jobId === job.id)).toBe(false);
    expect(await s.active()).not.toContain(job.id);
    expect(await s.purge(49)).toBe(0);
    expect(await s.purge(50)).toBeGreaterThanOrEqual(1);
    expect(await s.get(job.id)).toBeNull();
    expect(await s.pages(job.id, 0, 10)).toEqual([]);
  });

  it("lists every account's jobs for the operator: newest first, by account and status, bounded, each with a URL it started from", async () => {
    const s = await make();
    // Other cases' jobs share the database: this case's accounts are its own.
    const acct = `ops${Math.random().toString(36).slice(2, 10)}`;
    const other = `${acct}x`;
    const crawl = jobRecord({ account: acct, createdAt: 1000 });
    const batch = jobRecord({ account: acct, kind: "batch", createdAt: 3000, id: jobRecord().id.replace("crawl", "batch"), spec: { ...jobRecord().spec, url: null, limit: 2 } });
    const done = jobRecord({ account: other, createdAt: 3000 });
    const running = jobRecord({ account: acct, createdAt: 2000 });
    await s.create(crawl, [{ jobId: crawl.id, url: "http://x.test/", depth: 0 }], []);
    const urls = ["http://b.test/z", "http://b.test/m"].map((url) => ({ jobId: batch.id, url, depth: 0 }));
    await s.create(batch, urls, [{ url: "http://10.0.0.1/", reason: "url_not_allowed" }]);
    await s.create(done, [{ jobId: done.id, url: "http://d.test/", depth: 0 }], []);
    await s.transition(done.id, ["queued"], "completed", { finishedAt: 4000, stoppedReason: null });
    const seed = { jobId: running.id, url: "http://r.test/", depth: 0 };
    await s.create(running, [seed], []);
    await s.finish(seed, ok(seed.url), [{ jobId: running.id, url: "http://r.test/a", depth: 1 }], [], 2500);

    const mine = await s.list({ account: acct }, 10);
    expect(mine.map((j) => [j.id, j.status, j.firstUrl])).toEqual([
      [batch.id, "queued", "http://b.test/m"],
      [running.id, "running", "http://r.test/"],
      [crawl.id, "queued", "http://x.test/"],
    ]);
    expect(mine[0]).toMatchObject({ kind: "batch", account: acct, discovered: 2, skipped: 1, spec: batch.spec });
    expect(mine[1]).toMatchObject({ discovered: 2, completed: 1, failed: 0 });
    expect((await s.list({ account: acct }, 1)).map((j) => j.id)).toEqual([batch.id]);
    expect((await s.list({ account: acct, statuses: ["running", "completed"] }, 10)).map((j) => j.id)).toEqual([running.id]);
    expect((await s.list({ account: other, statuses: ["queued", "running"] }, 10))).toEqual([]);
    expect((await s.list({ account: other }, 10)).map((j) => [j.id, j.status, j.finishedAt])).toEqual([[done.id, "completed", 4000]]);
    expect(await s.list({ account: acct, statuses: [] }, 10)).toEqual([]);
    // Without an account: every account's, newest first; at the same creation time the greater id first (crawl_… > batch_…).
    const all = (await s.list({}, 1000)).filter((j) => j.account === acct || j.account === other).map((j) => j.id);
    expect(all).toEqual([done.id, batch.id, running.id, crawl.id]);
  });

  it("counts active jobs by kind and status for /metrics; finished jobs are not counted", async () => {
    const s = await make();
    // Deltas: a store shared by several of these tests holds their jobs too.
    const counts = async () => {
      const rows = await s.activeCounts!();
      return (kind: string, status: string) => rows.find((r) => r.kind === kind && r.status === status)?.jobs ?? 0;
    };
    const before = await counts();
    const [crawl, running, batch, ended] = [jobRecord(), jobRecord(), jobRecord({ kind: "batch" }), jobRecord({ kind: "batch" })];
    for (const job of [crawl, running, batch, ended]) await s.create(job, [{ jobId: job.id, url: "http://x.test/", depth: 0 }], []);
    const first = { jobId: running.id, url: "http://x.test/", depth: 0 };
    expect(await s.claim(first, 1, 60_000)).toBe(true);
    expect((await s.finish(first, bad(first.url), [{ jobId: running.id, url: "http://x.test/b", depth: 1 }], [], 2)).recorded).toBe(true);
    expect(await s.transition(ended.id, ["queued", "running"], "completed", { finishedAt: 3 })).toBe(true);
    const after = await counts();
    expect(after("crawl", "queued") - before("crawl", "queued")).toBe(1);
    expect(after("crawl", "running") - before("crawl", "running")).toBe(1);
    expect(after("batch", "queued") - before("batch", "queued")).toBe(1);
    expect(after("batch", "running") - before("batch", "running")).toBe(0);
    for (const r of await s.activeCounts!()) expect(r.jobs).toBeGreaterThan(0);
  });

  it("shares host slots: at most `slots` holders at once, Crawl-delay between starts, a dead holder's slot back after its lease", async () => {
    const s = await make();
    const host = `h${++n}.test`;
    // Two slots; no delay.
    expect(await s.takeHostSlot(host, `${host}-a`, 2, 0, 1000, 5000)).toBe(0);
    expect(await s.takeHostSlot(host, `${host}-b`, 2, 0, 1001, 5000)).toBe(0);
    expect(await s.takeHostSlot(host, `${host}-c`, 2, 0, 1002, 5000)).toBe(-1);
    // Another host is not held back.
    expect(await s.takeHostSlot(`other-${host}`, `${host}-x`, 2, 0, 1002, 5000)).toBe(0);
    await s.releaseHostSlot(`${host}-a`);
    expect(await s.takeHostSlot(host, `${host}-c`, 2, 0, 1003, 5000)).toBe(0);
    // b renews its lease; c does not and "dies": at 7000 c's slot is free again, b's is not.
    await s.renewHostSlots([`${host}-b`], 20_000);
    expect(await s.takeHostSlot(host, `${host}-d`, 2, 0, 5000, 5000)).toBe(-1);
    expect(await s.takeHostSlot(host, `${host}-d`, 2, 0, 7000, 5000)).toBe(0);
    expect(await s.takeHostSlot(host, `${host}-e`, 2, 0, 7001, 5000)).toBe(-1);
    // Crawl-delay: 300 ms between starts, whatever slots are free.
    const slow = `slow-${host}`;
    expect(await s.takeHostSlot(slow, `${slow}-a`, 2, 300, 1000, 5000)).toBe(0);
    expect(await s.takeHostSlot(slow, `${slow}-b`, 2, 300, 1100, 5000)).toBe(200);
    expect(await s.takeHostSlot(slow, `${slow}-b`, 2, 300, 1300, 5000)).toBe(0);
    await s.releaseHostSlot(`${slow}-a`);
    expect(await s.takeHostSlot(slow, `${slow}-c`, 2, 300, 1400, 5000)).toBe(200);
  });

  // A single-owner store keeps its claims in the one process that owns it: no lease to run out.
  if (!opts.singleOwner) it("hands a dead worker's claimed entry back once its lease runs out, unless the worker renewed it", async () => {
    const s = await make();
    const job = jobRecord({ spec: { ...jobRecord().spec, limit: 10 } });
    const a = { jobId: job.id, url: "http://x.test/a", depth: 0 };
    const b = { jobId: job.id, url: "http://x.test/b", depth: 0 };
    await s.create(job, [a, b], []);
    expect(await s.claim(a, 1000, 1000)).toBe(true);
    expect(await s.claim(b, 1000, 1000)).toBe(true);
    expect(await s.renew([{ task: b, lease: 2000 }], 10_000)).toEqual([true]);
    expect((await s.requeueExpired(1500, 100)).filter((t) => t.jobId === job.id)).toEqual([]);
    expect((await s.requeueExpired(2500, 100)).filter((t) => t.jobId === job.id)).toEqual([a]);
    // Given back once; then claimable again (and b, renewed, still held).
    expect((await s.requeueExpired(2600, 100)).filter((t) => t.jobId === job.id)).toEqual([]);
    expect(await s.claim(a, 2700, 1000)).toBe(true);
    expect(await s.claim(b, 2700, 1000)).toBe(false);
    // The first worker of a, late, finds out it lost the entry; the new one renews it.
    expect(await s.renew([{ task: a, lease: 2000 }, { task: b, lease: 10_000 }], 20_000)).toEqual([false, true]);
    expect(await s.renew([{ task: a, lease: 3700 }], 20_000)).toEqual([true]);
    // A finished job's entries are not handed out again.
    await s.transition(job.id, ["queued", "running"], "cancelled", { finishedAt: 3000 });
    expect((await s.requeueExpired(50_000, 100)).filter((t) => t.jobId === job.id)).toEqual([]);
  });

  it("keeps webhook deliveries until delivered: claimed by one at a time, retried when due, reclaimed after a dead holder's lease", async () => {
    const s = await make();
    const id = `whd_${++n}`;
    const d = { id, jobId: "crawl_x", event: "completed", body: '{"a":1}', attempt: 0, nextAt: 1000 };
    await s.addDelivery(d, 2000);
    const mine = async (now: number) => (await s.claimDeliveries(now, now + 1000, 100)).filter((x) => x.id === id);
    // Held by the instance making its first attempt.
    expect(await mine(1500)).toEqual([]);
    expect(await s.nextDeliveryAt()).not.toBeNull();
    await s.retryDelivery(id, 1, 3000, { event: "completed", at: 2000, error: "http_500" });
    expect(await mine(2500)).toEqual([]);
    expect(await mine(3000)).toEqual([{ ...d, attempt: 1, nextAt: 3000 }]);
    // Claimed: nobody else gets it until the lease (4000) runs out, as if its holder died.
    expect(await mine(3500)).toEqual([]);
    expect(await mine(4001)).toHaveLength(1);
    await s.dropDelivery(id);
    expect(await mine(100_000)).toEqual([]);
  });

  it("tallies each job's deliveries: made, waiting, given up, and the latest failed attempt, each counted once", async () => {
    const s = await make();
    const job = jobRecord({ expiresAt: 9000 });
    const other = jobRecord();
    await s.create(job, [], []);
    await s.create(other, [], []);
    expect(await s.webhookTally(job.id)).toEqual({ delivered: 0, pending: 0, failed: 0, lastError: null });
    const d = (event: string, jobId = job.id) => ({ id: `whd_${++n}`, jobId, event, body: "{}", attempt: 0, nextAt: 1000 });
    const [started, page, done, elsewhere] = [d("started"), d("page"), d("completed"), d("started", other.id)];
    for (const x of [started!, page!, done!, elsewhere!]) await s.addDelivery(x, 2000);
    expect(await s.webhookTally(job.id)).toEqual({ delivered: 0, pending: 3, failed: 0, lastError: null });

    await s.endDelivery(started!.id, null);
    // A second holder ending it (its lease had run out) counts nothing more.
    await s.endDelivery(started!.id, null);
    await s.retryDelivery(page!.id, 1, 3000, { event: "page", at: 2500, error: "http_500" });
    expect(await s.webhookTally(job.id)).toEqual({ delivered: 1, pending: 2, failed: 0, lastError: { event: "page", at: 2500, error: "http_500" } });
    // An attempt that fails later is the last error; one reported late (an earlier attempt) is not.
    await s.retryDelivery(done!.id, 1, 3000, { event: "completed", at: 2600, error: "timeout" });
    await s.endDelivery(page!.id, { event: "page", at: 2550, error: "url_not_allowed" });
    await s.endDelivery(page!.id, { event: "page", at: 2700, error: "http_502" });
    expect(await s.webhookTally(job.id)).toEqual({ delivered: 1, pending: 1, failed: 1, lastError: { event: "completed", at: 2600, error: "timeout" } });
    await s.endDelivery(done!.id, { event: "completed", at: 4000, error: "http_503" });
    expect(await s.webhookTally(job.id)).toEqual({ delivered: 1, pending: 0, failed: 2, lastError: { event: "completed", at: 4000, error: "http_503" } });
    // Each job its own; a purged job's tally goes with it.
    expect(await s.webhookTally(other.id)).toEqual({ delivered: 0, pending: 1, failed: 0, lastError: null });
    await s.endDelivery(elsewhere!.id, null);
    expect(await s.purge(10_000)).toBeGreaterThanOrEqual(1);
    expect(await s.webhookTally(job.id)).toEqual({ delivered: 0, pending: 0, failed: 0, lastError: null });
    expect(await s.webhookTally(other.id)).toEqual({ delivered: 1, pending: 0, failed: 0, lastError: null });
  });
}
