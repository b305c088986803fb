import { describe, expect, it } from "vitest";
import { periodOf, periodResetAt } from "../../core/limits/period.ts";
import { retryAfterSeconds, SlidingWindow } from "../../core/limits/sliding-window.ts";
import { TokenBuckets } from "../../core/limits/token-bucket.ts";
import { accountPlans, applyPlanOverrides, DEFAULT_PLANS, planLabel, resolvePlan } from "../../core/limits/plans.ts";

describe("sliding window", () => {
  it("admits at most N in any rolling 60 s, exactly at the edge", () => {
    const w = new SlidingWindow();
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) {
      expect(w.count(t0 + i * 10, 60_000)).toBe(i);
      w.add(t0 + i * 10);
    }
    expect(w.count(t0 + 59_999, 60_000)).toBe(3);
    // The first admission (t0) leaves the window when now - t0 reaches 60 000 ms.
    expect(w.count(t0 + 60_000, 60_000)).toBe(2);
    expect(w.count(t0 + 60_020, 60_000)).toBe(0);
  });

  it("says how long until the next admission", () => {
    const w = new SlidingWindow();
    w.add(0);
    w.add(0);
    w.add(30_000);
    // limit 3, full: the two at t=0 expire at 60 000
    expect(w.retryAfterMs(10_000, 60_000, 3)).toBe(50_000);
    // limit 2 (lowered plan): two must leave; the second oldest bucket (t=0, n=2) expires at 60 000
    expect(w.retryAfterMs(10_000, 60_000, 2)).toBe(50_000);
    // limit 1: the t=30 000 one must leave too
    expect(w.retryAfterMs(10_000, 60_000, 1)).toBe(80_000);
    expect(retryAfterSeconds(50_000)).toBe(50);
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(0)).toBe(1);
  });

  it("stays small under a long stream of hits", () => {
    const w = new SlidingWindow();
    let inLastMinute = 0;
    for (let t = 0; t < 1_000_000; t += 7) {
      w.count(t, 60_000);
      w.add(t);
      if (t > 1_000_000 - 60_000) inLastMinute++;
    }
    expect(inLastMinute).toBe(8572);
    expect(w.count(1_000_000, 60_000)).toBe(inLastMinute);
    const internal = w as unknown as { ms: number[]; head: number };
    expect(internal.ms.length - internal.head).toBe(inLastMinute);
    expect(internal.ms.length).toBeLessThan(3 * inLastMinute);
  });
});

describe("token bucket", () => {
  it("allows the burst, then the average rate", () => {
    const b = new TokenBuckets({ ratePerSecond: 100, burst: 200 });
    let ok = 0;
    for (let i = 0; i < 300; i++) if (b.take("ip", 0) === 0) ok++;
    expect(ok).toBe(200);
    expect(b.take("ip", 0)).toBe(10); // one token takes 10 ms at 100/s
    expect(b.take("ip", 10)).toBe(0);
    expect(b.take("other", 10)).toBe(0);
  });

  it("keeps memory bounded", () => {
    const b = new TokenBuckets({ ratePerSecond: 1, burst: 1 }, 100);
    for (let i = 0; i < 1000; i++) b.take(`ip${i}`, 0);
    expect((b as unknown as { buckets: Map<string, unknown> }).buckets.size).toBeLessThanOrEqual(100);
  });
});

describe("quota period", () => {
  it("is the UTC calendar month and resets at the next month's first instant", () => {
    expect(periodOf(Date.UTC(2026, 10, 30, 23, 59, 59))).toBe("2026-11");
    expect(periodResetAt(Date.UTC(2026, 10, 22))).toBe("2026-12-01T00:00:00Z");
    expect(periodResetAt(Date.UTC(2026, 11, 31, 23, 59))).toBe("2027-01-01T00:00:00Z");
    expect(periodOf(Date.UTC(2026, 11, 1, 0, 0, 0))).toBe("2026-12");
  });
});

describe("an account's plan against the table", () => {
  const plans = applyPlanOverrides(DEFAULT_PLANS, { gold: { quota: 50, per_minute: 9 } });
  const without = DEFAULT_PLANS;

  it("resolves a defined plan as itself and an undefined one as free, saying it fell back", () => {
    expect(resolvePlan(plans, "gold")).toEqual({ plan: plans.gold, fellBack: false });
    expect(resolvePlan(without, "gold")).toEqual({ plan: DEFAULT_PLANS.free, fellBack: true });
    // An inherited property of a plain object names no plan.
    expect(resolvePlan(without, "constructor")).toEqual({ plan: DEFAULT_PLANS.free, fellBack: true });
    expect(planLabel("gold", resolvePlan(without, "gold"))).toBe("gold (not defined; served as free)");
    expect(planLabel("gold", resolvePlan(plans, "gold"))).toBe("gold");
  });

  it("a server's resolver reports each undefined plan id once, and an account with no record not at all", () => {
    const heard: string[] = [];
    const planOf = accountPlans(without, (message) => heard.push(message));
    expect(planOf("acme", "gold")).toBe(DEFAULT_PLANS.free);
    expect(planOf("acme", "gold")).toBe(DEFAULT_PLANS.free);
    expect(planOf("globex", "gold")).toBe(DEFAULT_PLANS.free);
    expect(planOf("initech", "silver")).toBe(DEFAULT_PLANS.free);
    expect(planOf("hooli", undefined)).toBe(DEFAULT_PLANS.free);
    expect(planOf("pied", "pro")).toBe(DEFAULT_PLANS.pro);
    expect(heard).toEqual([
      'account "acme" is on plan "gold", which QUARRY_PLANS does not define; it is served as "free"',
      'account "initech" is on plan "silver", which QUARRY_PLANS does not define; it is served as "free"',
    ]);
  });
});
