/** Plans (the spec's Limits table), overridable per field through `QUARRY_PLANS`. */

export interface Plan {
  id: string;
  /** Monthly request quota; null = unlimited. */
  quota: number | null;
  perMinute: number;
}

export type PlanTable = Record<string, Plan>;

export const DEFAULT_PLANS: PlanTable = {
  free: { id: "free", quota: 1_000, perMinute: 60 },
  starter: { id: "starter", quota: 10_000, perMinute: 200 },
  pro: { id: "pro", quota: 100_000, perMinute: 500 },
  enterprise: { id: "enterprise", quota: null, perMinute: 2_000 },
};

/** The lowest plan: new accounts start on it and anonymous responses describe it. */
export const LOWEST_PLAN = "free";

export interface PlanOverride {
  quota?: number | null;
  per_minute?: number;
}

/** Applies overrides on top of the defaults; a new plan id needs both fields. */
export function applyPlanOverrides(base: PlanTable, overrides: Record<string, PlanOverride>): PlanTable {
  const out: PlanTable = { ...base };
  for (const [id, o] of Object.entries(overrides)) {
    const prev = out[id];
    const quota = o.quota !== undefined ? o.quota : prev?.quota;
    const perMinute = o.per_minute ?? prev?.perMinute;
    if (quota === undefined || perMinute === undefined) {
      throw new Error(`plan "${id}" is new, so it needs both "quota" and "per_minute"`);
    }
    out[id] = { id, quota, perMinute };
  }
  return out;
}
