/** GET /v1/usage: the calling key's plan, quota and use this month (spec: Usage record). */
import * as v from "valibot";
import { Count } from "../schema/fields.ts";
import type { AppDeps } from "../gateway/context.ts";
import { USAGE_GROUPS } from "../limits/groups.ts";
import { periodOf, periodResetAt } from "../limits/period.ts";
import type { RouteDef } from "../gateway/route.ts";
import { reply } from "../gateway/headers.ts";
import type { Plan } from "../limits/plans.ts";
import type { UsageCount } from "../ports.ts";
import { IsoTimestamp } from "./schemas.ts";
import { dailyUsageRoute } from "./usage-daily.ts";


export const UsageRecord = v.object({
  plan: v.string(),
  quota: v.nullable(Count),
  used: Count,
  remaining: v.nullable(Count),
  reset_at: IsoTimestamp,
  per_minute_limit: Count,
  endpoints: v.record(v.string(), Count),
});

/** A number as JSON.stringify writes it (one that is not finite is null). */
const num = (n: number | null): string => (n === null || !Number.isFinite(n) ? "null" : String(n));
/** Each plan's id as a JSON string, made once. */
const planIds = new Map<string, string>();

/**
 * The Usage record's JSON, member by member in the schema's order: what JSON.stringify writes for
 * `{plan, quota, used, remaining, reset_at, per_minute_limit, endpoints}`, without the two objects
 * and the walk over them per request (issue #33; tests/unit/usage-record.test.ts holds them equal).
 */
export function usageRecord(plan: Plan, usage: UsageCount, resetAt: string): string {
  let id = planIds.get(plan.id);
  if (id === undefined) {
    id = JSON.stringify(plan.id);
    if (planIds.size < 1000) planIds.set(plan.id, id);
  }
  const remaining = plan.quota === null ? null : Math.max(0, plan.quota - usage.used);
  let endpoints = "";
  for (const g of USAGE_GROUPS) endpoints += `${endpoints === "" ? "" : ","}"${g}":${num(usage.groups[g] ?? 0)}`;
  return `{"plan":${id},"quota":${num(plan.quota)},"used":${num(usage.used)},"remaining":${num(remaining)},"reset_at":${JSON.stringify(resetAt)},"per_minute_limit":${num(plan.perMinute)},"endpoints":{${endpoints}}}`;
}

export function usageRoutes(deps: AppDeps): RouteDef[] {
  const { ports } = deps;
  return [
    {
      method: "GET",
      path: "/v1/usage",
      operationId: "getUsage",
      summary: "The calling key's plan, monthly quota and use by operation group",
      auth: true,
      scope: null,
      group: null,
      readsUsage: true,
      status: 200,
      response: UsageRecord,
      errors: [],
      handler: async (c) => {
        const { key, plan } = c.get("auth")!;
        const now = ports.clock.now();
        const period = periodOf(now);
        // Read with the admission where the counters could (one round trip fewer), else now.
        const admitted = c.get("usage");
        const usage = admitted?.period === period ? admitted.count : await ports.counters.usage(key.id, period);
        return reply(c, usageRecord(plan, usage, periodResetAt(now)));
      },
    },
    dailyUsageRoute(deps),
  ];
}
