/** The JobStore contract (core/ports/jobs.ts), run against every implementation. */
import { expect, it } from "vitest";
import type { JobStore } from "../../core/ports.ts";
import type { JobRecord, PageResult } from "../../core/ports/job-model.ts";

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

  // Several instances claim through claimNext; one owner's claims live in its memory instead.
  if (!opts.singleOwner) it("claims the next page fairly: fewest claimed accounts first, then the one served longest ago; its jobs in turn; shallowest entries first", async () => {
    const s = await make();
    for (const id of await s.active()) await s.transition(id, ["queued", "running"], "cancelled", {});
    const tag = String(++n);
    const spec = { ...jobRecord().spec, limit: 10 };
    const a1 = jobRecord({ account: `fair-a${tag}`, spec });
    const a2 = jobRecord({ account: `fair-a${tag}`, spec });
    const b1 = jobRecord({ account: `fair-b${tag}`, spec });
    const at = (job: JobRecord, path: string, depth = 0) => ({ jobId: job.id, url: `http://x.test/${path}`, depth });
    await s.create(a1, ["1", "2", "3", "4"].map((p) => at(a1, p)), []);
    await s.create(a2, [at(a2, "5"), at(a2, "6")], []);
    await s.create(b1, [at(b1, "deep", 1), at(b1, "top")], []);
    const claimed: string[] = [];
    for (let i = 0; i < 8; i++) {
      const t = await s.claimNext(100, 60_000);
      claimed.push(t ? `${t.jobId === a1.id ? "a1" : t.jobId === a2.id ? "a2" : "b1"} ${new URL(t.url).pathname}` : "none");
    }
    expect(claimed.slice(0, 4)).toEqual(["a1 /1", "b1 /top", "a2 /5", "b1 /deep"]);
    // B has nothing left: A's jobs take turns; each entry is claimed once.
    expect(claimed.slice(4).map((c) => c.split(" ")[0])).toEqual(["a1", "a2", "a1", "a1"]);
    expect(new Set(claimed).size).toBe(8);
    expect(await s.claimNext(101, 60_000)).toBeNull();
    // A claim whose lease ran out is pending again once handed back, and claimed again.
    const again = at(b1, "top");
    await s.release(again);
    expect(await s.claimNext(102, 60_000)).toEqual(again);
  });

  it("creates jobs only within the account's limits: at most `jobs` active at once, exactly, however many are created at once", async () => {
    const s = await make();
    const account = `limited${++n}`;
    const jobs = Array.from({ length: 6 }, () => jobRecord({ account }));
    const outcomes = await Promise.all(jobs.map((j) => s.create(j, [{ jobId: j.id, url: "http://x.test/", depth: 0 }], [], { jobs: 2, bytes: null })));
    expect(outcomes.filter((o) => o.created)).toHaveLength(2);
    expect(outcomes.filter((o) => !o.created)).toEqual(Array(4).fill({ created: false, reason: "too_many_jobs", active: 2 }));
    // Refused ones were not stored; an ended job makes room for the next.
    const stored = jobs.filter((_, i) => outcomes[i]!.created);
    expect((await Promise.all(jobs.map((j) => s.get(j.id)))).filter(Boolean).map((j) => j!.id).sort()).toEqual(stored.map((j) => j.id).sort());
    await s.transition(stored[0]!.id, ["queued", "running"], "completed", { finishedAt: 5 });
    const next = jobRecord({ account });
    expect(await s.create(next, [{ jobId: next.id, url: "http://x.test/", depth: 0 }], [], { jobs: 2, bytes: null })).toEqual({ created: true });
    // Another account is not counted against this one.
    const other = jobRecord({ account: `${account}-other` });
    expect(await s.create(other, [], [], { jobs: 1, bytes: null })).toEqual({ created: true });
  });

  it("counts the bytes each account's jobs hold: stops storing pages past its cap, refuses new jobs when full, frees them when the jobs are purged", async () => {
    const s = await make();
    const account = `stored${++n}`;
    const spec = { ...jobRecord().spec, limit: 20 };
    const job = jobRecord({ account, spec });
    const seed = { jobId: job.id, url: "http://x.test/", depth: 0 };
    const limits = { jobs: 10, bytes: 3000 };
    expect(await s.create(job, [seed], [], limits)).toEqual({ created: true });
    const seeded = (await s.get(job.id))!.bytes!;
    expect(seeded).toBe("http://x.test/".length);
    const opts = { accountBytes: 3000, skippedUrls: 2, droppedLinks: 7, cutBytes: 11 };
    const big = (url: string): PageResult => ({ url, ok: true, statusCode: 200, title: "t", data: { markdown: "m".repeat(1000) }, error: null });
    const found = ["a", "b"].map((p) => ({ jobId: job.id, url: `http://x.test/${p}`, depth: 1 }));
    const skipped = ["s1", "s2", "s3", "s4"].map((p) => ({ url: `http://x.test/${p}`, reason: "robots_disallowed" }));
    const r1 = await s.finish(seed, big(seed.url), found, skipped, 1, opts);
    expect(r1).toMatchObject({ recorded: true, added: found });
    expect(r1.full).toBeUndefined();
    let after = (await s.get(job.id))!;
    // Two skipped URLs listed, two counted only; the page's own dropped links and cut bytes added.
    expect(after).toMatchObject({ skipped: 2, dropped: { links: 7, contentBytes: 11, skippedUrls: 2, pages: 0 } });
    expect((await s.skippedUrls(job.id, 10)).map((u) => u.url)).toEqual(["http://x.test/s1", "http://x.test/s2"]);
    const page1 = JSON.stringify(big(seed.url).data).length + 1; // the data as stored, and the title
    expect(after.bytes).toBe(seeded + page1 + found.reduce((n, f) => n + f.url.length, 0) + 2 * ("http://x.test/s1".length + "robots_disallowed".length));
    expect((await s.diskUsage?.())?.jobs).toBeGreaterThanOrEqual(after.bytes!);
    const r2 = await s.finish(found[0]!, big(found[0]!.url), [{ jobId: job.id, url: "http://x.test/c", depth: 2 }], [], 2, opts);
    expect(r2.full).toBeUndefined();
    // The third page would take the account past 3000 bytes: kept as a failure without content, adding nothing.
    const r3 = await s.finish(found[1]!, big(found[1]!.url), [{ jobId: job.id, url: "http://x.test/d", depth: 2 }], [], 3, opts);
    expect(r3).toMatchObject({ recorded: true, full: true, added: [] });
    after = (await s.get(job.id))!;
    expect(after).toMatchObject({ completed: 2, failed: 1, discovered: 4, dropped: { links: 14, contentBytes: 22, skippedUrls: 2, pages: 1 } });
    const last = (await s.pages(job.id, 2, 1))[0]!;
    expect(last).toMatchObject({ url: found[1]!.url, ok: false, error: "storage_full", data: {} });
    // Full: a new job of the account is refused (with `room`: when one more page of that size would not fit), saying
    // when room comes back (its kept job's expiry, once it has one).
    const held = after.bytes!;
    expect(held).toBeLessThan(3000);
    expect(await s.create(jobRecord({ account }), [], [], { ...limits, room: 3000 - held })).toMatchObject({ created: false, reason: "storage_full", bytes: held, freesAt: null });
    expect(await s.create(jobRecord({ account: `${account}-other` }), [], [], limits)).toEqual({ created: true });
    await s.transition(job.id, ["queued", "running"], "completed", { finishedAt: 10, expiresAt: 100 });
    expect(await s.create(jobRecord({ account }), [], [], { ...limits, room: 1000 })).toMatchObject({ created: false, reason: "storage_full", bytes: held, freesAt: 100 });
    await s.purge(100);
    expect(await s.create(jobRecord({ account }), [], [], { ...limits, room: 1000 })).toEqual({ created: true });
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
