/** The Counters contract: every implementation (memory, SQLite, PostgreSQL, Redis) must pass it. */
import { beforeEach, describe, expect, it } from "vitest";
import type { AdmitRequest, AdmitResult, Counters } from "../../core/ports.ts";

let seq = 0;
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

/** `shared`: the store outlives instances (PostgreSQL, Redis), so a dead instance's leases must expire. */
export function countersContract(name: string, make: () => Promise<Counters>, opts: { shared?: boolean } = {}) {
  describe(`Counters contract: ${name}`, () => {
    let c: Counters;
    let keyId: string;
    beforeEach(async () => {
      c = await make();
      keyId = `key_contract_${process.pid}_${Date.now()}_${seq++}`;
    });
    const req = (over: Partial<AdmitRequest> = {}): AdmitRequest => ({
      keyId, now: T0, perMinute: 3, windowMs: 60_000, period: "2026-11", group: "search", quota: 100, ...over,
    });
    /** Admits and, when admitted, answers (commits). */
    const serve = async (over: Partial<AdmitRequest> = {}): Promise<AdmitResult & { after?: number }> => {
      const r = await c.admit(req(over));
      if (r.ok && r.ticket) return { ...r, after: await c.commit(r.ticket) };
      return r;
    };

    it("admits up to the per-minute limit, then refuses with the wait until the oldest leaves", async () => {
      for (let i = 0; i < 3; i++) expect((await serve({ now: T0 + i * 1000 })).ok).toBe(true);
      const refused = await c.admit(req({ now: T0 + 5000 }));
      expect(refused).toMatchObject({ ok: false, reason: "rate_limited", retryAfterMs: 55_000 });
      // exactly at the edge the first one has left
      expect((await c.admit(req({ now: T0 + 59_999 }))).ok).toBe(false);
      expect((await serve({ now: T0 + 60_000 })).ok).toBe(true);
    });

    it("counts refused requests toward nothing, and only committed ones as use", async () => {
      for (let i = 0; i < 5; i++) await serve();
      expect((await c.usage(keyId, "2026-11")).used).toBe(3);
    });

    it("unmetered requests take a window slot but no quota and no ticket", async () => {
      expect(await c.admit(req({ group: null }))).toEqual({ ok: true, used: 0, ticket: null });
      await c.admit(req({ group: null }));
      await serve({ group: "scrape" });
      expect((await c.admit(req({ group: "scrape" }))).ok).toBe(false);
      expect(await c.usage(keyId, "2026-11")).toEqual({ used: 1, groups: { scrape: 1 } });
    });

    it("enforces the quota across groups; commit reports the month's use", async () => {
      const q = { perMinute: 1000, quota: 3 };
      expect(await serve({ ...q, group: "search" })).toMatchObject({ ok: true, used: 0, after: 1 });
      expect(await serve({ ...q, group: "video" })).toMatchObject({ ok: true, used: 1, after: 2 });
      expect(await serve({ ...q, group: "search" })).toMatchObject({ ok: true, used: 2, after: 3 });
      expect(await c.admit(req({ ...q, group: "scrape" }))).toEqual({ ok: false, reason: "quota_exceeded", used: 3 });
      expect(await c.usage(keyId, "2026-11")).toEqual({ used: 3, groups: { search: 2, video: 1 } });
      // a new month starts from zero
      expect(await serve({ ...q, period: "2026-12", now: T0 + 86_400_000 })).toMatchObject({ ok: true, used: 0, after: 1 });
    });

    it("a pending reservation holds its unit of quota; a released one gives it back and counts nothing", async () => {
      const q = { perMinute: 1000, quota: 2 };
      const a = await c.admit(req(q));
      const b = await c.admit(req(q));
      expect(a.ok && b.ok).toBe(true);
      expect((await c.admit(req(q))).ok).toBe(false); // two reservations fill a quota of 2
      if (!a.ok || !b.ok) throw new Error("unreachable");
      await c.release(a.ticket!);
      const again = await c.admit(req(q));
      expect(again.ok).toBe(true);
      await c.commit(b.ticket!);
      if (again.ok) await c.commit(again.ticket!);
      expect((await c.usage(keyId, "2026-11")).used).toBe(2);
    });

    it("unlimited quota never refuses for quota", async () => {
      for (let i = 0; i < 20; i++) expect((await serve({ perMinute: 1000, quota: null })).ok).toBe(true);
    });

    it("refunds give one committed unit back and never go below zero", async () => {
      await serve({ perMinute: 100 });
      await serve({ perMinute: 100 });
      await c.refund(keyId, "2026-11", "search", "2026-11-22");
      expect((await c.usage(keyId, "2026-11")).used).toBe(1);
      expect(await c.daily([keyId], "2026-11")).toEqual({ [keyId]: { "2026-11-22": { search: 1 } } });
      await c.refund(keyId, "2026-11", "search", "2026-11-22");
      await c.refund(keyId, "2026-11", "search", "2026-11-22");
      expect((await c.usage(keyId, "2026-11")).used).toBe(0);
      expect((await c.daily([keyId], "2026-11"))[keyId] ?? {}).toEqual({});
    });

    it("counts each committed unit on the UTC day it was admitted, by group, per key; refused, released and pending ones on no day", async () => {
      const q = { perMinute: 1000, quota: 100 };
      const day = (d: number, h = 12) => Date.UTC(2026, 10, d, h, 0, 0);
      await serve({ ...q, now: day(1, 0) }); // the first instant of the day
      await serve({ ...q, now: day(1, 23) });
      await serve({ ...q, now: day(1, 23), group: "video" });
      await serve({ ...q, now: Date.UTC(2026, 10, 3, 23, 59, 59, 999) });
      await serve({ ...q, now: day(22) });
      const pending = await c.admit(req({ ...q, now: day(22) }));
      const released = await c.admit(req({ ...q, now: day(22) }));
      if (released.ok) await c.release(released.ticket!);
      expect((await c.admit(req({ perMinute: 1000, quota: 6, now: day(22) }))).ok).toBe(false); // 5 used + 1 pending fill 6
      const other = `${keyId}_other`;
      await serve({ ...q, keyId: other, now: day(2) });
      await serve({ ...q, period: "2026-12", now: Date.UTC(2026, 11, 1, 0, 0, 1) });
      const daily = await c.daily([keyId, other, `${keyId}_none`], "2026-11");
      expect(daily).toEqual({
        [keyId]: { "2026-11-01": { search: 2, video: 1 }, "2026-11-03": { search: 1 }, "2026-11-22": { search: 1 } },
        [other]: { "2026-11-02": { search: 1 } },
      });
      expect(await c.daily([keyId], "2026-12")).toEqual({ [keyId]: { "2026-12-01": { search: 1 } } });
      // the days add up to the month
      expect((await c.usage(keyId, "2026-11")).used).toBe(5);
      expect(await c.daily([], "2026-11")).toEqual({});
      if (pending.ok) await c.commit(pending.ticket!);
      expect((await c.daily([keyId], "2026-11"))[keyId]["2026-11-22"]).toEqual({ search: 2 });
    });

    it("a lowered limit waits until enough have left", async () => {
      for (let i = 0; i < 3; i++) await serve({ perMinute: 10, now: T0 + i * 10_000 });
      const r = await c.admit(req({ perMinute: 1, now: T0 + 25_000 }));
      expect(r).toMatchObject({ ok: false, reason: "rate_limited", retryAfterMs: 55_000 });
    });

    // Only counters shared between instances have another instance that can die mid-request.
    if (opts.shared) it("a dead instance's reservation expires by itself: unanswered requests are never counted", async () => {
      const q = { now: 1_000_000, perMinute: 1000, group: "scrape", quota: 1 };
      expect((await c.admit(req(q))).ok).toBe(true); // its instance dies before answering
      expect((await c.admit(req({ ...q, now: q.now + 119_000 }))).ok).toBe(false);
      const later = await c.admit(req({ ...q, now: q.now + 120_000 }));
      expect(later.ok).toBe(true);
      if (later.ok) expect(await c.commit(later.ticket!)).toBe(1);
      expect((await c.usage(keyId, "2026-11")).used).toBe(1);
    });

    it("is exact under concurrency: 200 at once on a limit of 60 admit 60, a quota of 5 admits 5", async () => {
      const burst = await Promise.all(Array.from({ length: 200 }, () => serve({ perMinute: 60, quota: null })));
      expect(burst.filter((r) => r.ok)).toHaveLength(60);
      const other = `${keyId}_q`;
      const quota = await Promise.all(Array.from({ length: 200 }, () => serve({ keyId: other, perMinute: 1000, quota: 5 })));
      expect(quota.filter((r) => r.ok)).toHaveLength(5);
      expect((await c.usage(other, "2026-11")).used).toBe(5);
    });
  });
}
