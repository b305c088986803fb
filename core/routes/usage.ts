/** GET /v1/usage: the calling key's plan, quota and use this month (spec: Usage record). */
import * as v from "valibot";
import { Count } from "../schema/fields.ts";
import type { AppDeps } from "../gateway/context.ts";
import { USAGE_GROUPS } from "../limits/groups.ts";
import { periodOf, periodResetAt } from "../limits/period.ts";
import type { RouteDef } from "../gateway/route.ts";
import { replyJson } from "../gateway/headers.ts";
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
      status: 200,
      response: UsageRecord,
      errors: [],
      handler: async (c) => {
        const { key, plan } = c.get("auth")!;
        const now = ports.clock.now();
        const usage = await ports.counters.usage(key.id, periodOf(now));
        const endpoints: Record<string, number> = {};
        for (const g of USAGE_GROUPS) endpoints[g] = usage.groups[g] ?? 0;
        return replyJson(c, {
          plan: plan.id,
          quota: plan.quota,
          used: usage.used,
          remaining: plan.quota === null ? null : Math.max(0, plan.quota - usage.used),
          reset_at: periodResetAt(now),
          per_minute_limit: plan.perMinute,
          endpoints,
        });
      },
    },
    dailyUsageRoute(deps),
  ];
}
