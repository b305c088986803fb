/**
 * GET /v1/usage/daily (#16): this month's use per UTC day and usage group, for the calling key
 * and, when it has the `keys` scope, for the account's keys it may manage (scopes within its
 * own, the rule of GET /v1/keys), side by side. Read from the counters' per-day records, which
 * each store writes together with the month's count, so admission does no extra work.
 */
import * as v from "valibot";
import type { AppDeps } from "../gateway/context.ts";
import type { RouteDef } from "../gateway/route.ts";
import { canManage } from "../keys/scopes.ts";
import { USAGE_GROUPS } from "../limits/groups.ts";
import { daysSoFar, periodOf } from "../limits/period.ts";
import { Count } from "../schema/fields.ts";
import type { DailyUsage, KeyRecord } from "../ports.ts";

const Day = v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/), v.description("A UTC calendar day, YYYY-MM-DD"));
const Groups = v.pipe(v.record(v.string(), Count), v.description("Requests counted in each usage group; every group is listed, 0 when unused"));

const KeyDaily = v.object({
  id: v.pipe(v.string(), v.regex(/^key_[0-9A-Z]{26}$/)),
  name: v.string(),
  prefix: v.pipe(v.string(), v.description("qry_ + first 4 hex + ... + last 4 hex")),
  used: v.pipe(Count, v.description("The key's counted requests over the days listed")),
  revoked_at: v.pipe(v.nullable(v.string()), v.description("When the key was revoked; null while it is active")),
  daily: v.pipe(
    v.array(v.object({ date: Day, used: Count, groups: Groups })),
    v.description("One entry per day of `days`, in the same order"),
  ),
});

export const DailyUsageRecord = v.object({
  period: v.pipe(v.string(), v.regex(/^\d{4}-\d{2}$/), v.description("The calendar month in UTC, YYYY-MM")),
  days: v.pipe(v.array(Day), v.description("Every day of the month up to today (UTC), oldest first")),
  groups: v.pipe(v.array(v.string()), v.description("The usage groups, in the order the dashboard shows them")),
  key: KeyDaily,
  keys: v.pipe(
    v.nullable(v.array(KeyDaily)),
    v.description("With the `keys` scope: the account's active keys whose scopes are all among the caller's, newest first, the caller included, then such keys revoked after use this month (their use is the account's month too); null without it"),
  ),
});

function keyDaily(k: KeyRecord, days: string[], usage: DailyUsage | undefined) {
  let used = 0;
  const daily = days.map((date) => {
    const counted = usage?.[date] ?? {};
    const groups: Record<string, number> = {};
    let n = 0;
    for (const g of USAGE_GROUPS) n += groups[g] = counted[g] ?? 0;
    used += n;
    return { date, used: n, groups };
  });
  return { id: k.id, name: k.name, prefix: k.prefix, used, revoked_at: k.revoked_at, daily };
}

export function dailyUsageRoute({ ports }: AppDeps): RouteDef {
  return {
    method: "GET",
    path: "/v1/usage/daily",
    operationId: "getDailyUsage",
    summary: "This month's use per day and operation group, for the calling key and the keys it may manage",
    description:
      "Counts this month's requests per UTC day and usage group (search, video, research, social, scrape, crawl), as they count toward " +
      "the quota: each answered request on the day it was admitted; refused requests and 5xx answers on no day. `key` is the " +
      "calling key. With the `keys` scope, `keys` lists the account's active keys whose scopes are all among the caller's (the " +
      "keys GET /v1/keys shows), each with the same daily series, so they can be compared side by side, then the keys of that kind " +
      "revoked after use this month (with `revoked_at`), so revoking a key does not hide what it cost; without it `keys` is " +
      "null. Not metered: it counts toward the per-minute limit only. The dashboard's usage view draws it.",
    auth: true,
    scope: null,
    group: null,
    status: 200,
    response: DailyUsageRecord,
    errors: [],
    handler: async (c) => {
      const { key, account } = c.get("auth")!;
      const now = ports.clock.now();
      const period = periodOf(now);
      const days = daysSoFar(now);
      let others: KeyRecord[] | null = null;
      if (key.scopes.includes("keys")) {
        // Active keys newest first, then the revoked ones (newest first; only those used this month stay, below).
        others = (await ports.keys.listKeys(account.name))
          .filter((k) => canManage(key.scopes, k.scopes))
          .sort((a, b) => Number(a.revoked_at !== null) - Number(b.revoked_at !== null) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
      }
      const ids = [...new Set([key.id, ...(others ?? []).map((k) => k.id)])];
      const usage = await ports.counters.daily(ids, period);
      others = others && others.filter((k) => !k.revoked_at || Object.keys(usage[k.id] ?? {}).length > 0);
      return c.json({
        period,
        days,
        groups: [...USAGE_GROUPS],
        key: keyDaily(key, days, usage[key.id]),
        keys: others && others.map((k) => keyDaily(k, days, usage[k.id])),
      });
    },
  };
}
