/**
 * Tavily `GET /usage` → native `GET /v1/usage` (not metered). Quarry counts per key against the
 * account's plan, so `key` and `account` report the same numbers; `quarry` keeps the native record.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../gateway/context.ts";
import { authorizationOf, type Dispatch } from "../dispatch.ts";
import { bodyOf } from "../http.ts";

interface NativeUsage {
  plan: string; quota: number | null; used: number; remaining: number | null; endpoints: Record<string, number>;
}

export function tavilyUsage(dispatch: Dispatch) {
  return async (c: Context<AppEnv>) => {
    const usage = bodyOf<NativeUsage>(await dispatch(c, { method: "GET", path: "/v1/usage", authorization: authorizationOf(c) }));
    const groups = {
      search_usage: usage.endpoints.search ?? 0,
      extract_usage: usage.endpoints.scrape ?? 0,
      // Natively a map is one unit of the `crawl` group, as each crawled page is: crawl_usage counts
      // both, and no separate map count exists to report (there is no `map` group).
      crawl_usage: usage.endpoints.crawl ?? 0,
      map_usage: 0,
      research_usage: usage.endpoints.research ?? 0,
    };
    return c.json({
      key: { usage: usage.used, limit: usage.quota, ...groups },
      account: { current_plan: usage.plan, plan_usage: usage.used, plan_limit: usage.quota, paygo_usage: 0, paygo_limit: null, ...groups },
      quarry: usage,
    });
  };
}
