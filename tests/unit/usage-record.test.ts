/** GET /v1/usage's body is written member by member (issue #33): the same bytes JSON.stringify writes for the record. */
import { describe, expect, it } from "vitest";
import { usageRecord } from "../../core/routes/usage.ts";
import { USAGE_GROUPS } from "../../core/limits/groups.ts";
import type { Plan } from "../../core/limits/plans.ts";

function reference(plan: Plan, usage: { used: number; groups: Record<string, number> }, resetAt: string): string {
  const endpoints: Record<string, number> = {};
  for (const g of USAGE_GROUPS) endpoints[g] = usage.groups[g] ?? 0;
  return JSON.stringify({
    plan: plan.id,
    quota: plan.quota,
    used: usage.used,
    remaining: plan.quota === null ? null : Math.max(0, plan.quota - usage.used),
    reset_at: resetAt,
    per_minute_limit: plan.perMinute,
    endpoints,
  });
}

describe("usageRecord", () => {
  it("writes what JSON.stringify writes for the Usage record", () => {
    const base = { jobsConcurrent: 1 } as unknown as Plan;
    const plans: Plan[] = [
      { ...base, id: "free", quota: 1000, perMinute: 10 },
      { ...base, id: "enterprise", quota: null, perMinute: 1_000_000_000 },
      { ...base, id: 'odd "plan" \\ é\u0001', quota: 5, perMinute: Infinity },
    ];
    const usages: Array<{ used: number; groups: Record<string, number> }> = [
      { used: 0, groups: {} },
      { used: 7, groups: { search: 3, scrape: 4 } },
      { used: 2000, groups: { crawl: 1999, research: 1, unknown: 5 } },
    ];
    for (const plan of plans) {
      for (const usage of usages) {
        expect(usageRecord(plan, usage, "2026-12-01T00:00:00Z")).toBe(reference(plan, usage, "2026-12-01T00:00:00Z"));
      }
    }
  });
});
