/** Plans (the spec's Limits table), overridable per field through `QUARRY_PLANS`. */

export interface Plan {
  id: string;
  /** Monthly request quota; null = unlimited. */
  quota: number | null;
  perMinute: number;
  /** Crawl and batch jobs an account may have queued or running at once (`jobs_concurrent`); past it a new one is a 429 `too_many_jobs`. */
  jobsConcurrent: number;
  /**
   * Bytes an account's jobs may keep stored (their pages and the URLs they found) until they expire
   * (`jobs_storage_bytes`); null = no cap. Full: a new job is a 429 `job_storage_full`, a running one
   * stops with `stopped_reason: "storage_full"`.
   */
  jobsStorageBytes: number | null;
  /** Documents an account's collections may hold in all (`index_documents`); null = no cap. Past it, adding is a 403 `index_full`. */
  indexDocuments: number | null;
  /**
   * Bytes of text an account's collections may hold in all (`index_bytes`: titles, headings and passages
   * in UTF-8, as a collection's `bytes` counts them); null = no cap. Past it, adding is a 403 `index_full`.
   */
  indexBytes: number | null;
  /** Monitors an account may keep (`monitors`, issue #31); null = no cap. Past it, creating one is a 403 `too_many_monitors`. */
  monitors: number | null;
}

export type PlanTable = Record<string, Plan>;

/** A size for a message: `100 MB`, `1.5 GB`, `512 KB` (binary units, as QUARRY_PLANS and the README give them). */
export function sizeText(bytes: number): string {
  const [unit, n] = bytes >= 2 ** 30 ? ["GB", bytes / 2 ** 30] : bytes >= 2 ** 20 ? ["MB", bytes / 2 ** 20] : ["KB", bytes / 2 ** 10];
  return `${Number(n.toFixed(n < 10 ? 1 : 0))} ${unit}`;
}

const MiB = 2 ** 20;
const GiB = 2 ** 30;

export const DEFAULT_PLANS: PlanTable = {
  free: { id: "free", quota: 1_000, perMinute: 60, jobsConcurrent: 2, jobsStorageBytes: 100 * MiB, indexDocuments: 1_000, indexBytes: 50 * MiB, monitors: 5 },
  starter: { id: "starter", quota: 10_000, perMinute: 200, jobsConcurrent: 5, jobsStorageBytes: 1024 * MiB, indexDocuments: 10_000, indexBytes: 500 * MiB, monitors: 25 },
  pro: { id: "pro", quota: 100_000, perMinute: 500, jobsConcurrent: 10, jobsStorageBytes: 5 * 1024 * MiB, indexDocuments: 100_000, indexBytes: 5 * GiB, monitors: 100 },
  enterprise: { id: "enterprise", quota: null, perMinute: 2_000, jobsConcurrent: 50, jobsStorageBytes: 20 * 1024 * MiB, indexDocuments: 1_000_000, indexBytes: 50 * GiB, monitors: 1_000 },
};

/** The lowest plan: new accounts start on it and anonymous responses describe it. */
export const LOWEST_PLAN = "free";

export interface PlanResolution {
  /** The plan whose limits apply. */
  plan: Plan;
  /** True when the table does not define the account's plan, so the lowest plan stands in for it. */
  fellBack: boolean;
}

/**
 * The plan an account on plan `id` is served on. An id the table lacks (a plan removed from
 * QUARRY_PLANS after accounts were put on it) is served as the lowest plan, and says so.
 */
export function resolvePlan(plans: PlanTable, id: string): PlanResolution {
  // Own properties only: "constructor" or "toString" name no plan.
  const own = Object.hasOwn(plans, id) ? plans[id] : undefined;
  if (own) return { plan: own, fellBack: false };
  const lowest = Object.hasOwn(plans, LOWEST_PLAN) ? plans[LOWEST_PLAN] : undefined;
  if (!lowest) throw new Error(`the plan table has no "${LOWEST_PLAN}" plan to serve accounts on an undefined one`);
  return { plan: lowest, fellBack: true };
}

/** The operator's words for an account on a plan the table does not define (server log). */
export function undefinedPlanWarning(account: string, id: string, servedAs: string): string {
  return `account "${account}" is on plan "${id}", which QUARRY_PLANS does not define; it is served as "${servedAs}"`;
}

/** An account's plan as the CLI shows it: the id, and what it is served as when the table lacks it. */
export function planLabel(id: string, resolved: PlanResolution): string {
  return resolved.fellBack ? `${id} (not defined; served as ${resolved.plan.id})` : id;
}

/** Resolves an account's plan (an account with no record is on the lowest plan). */
export type AccountPlans = (account: string, id: string | undefined) => Plan;

/**
 * resolvePlan for a running server: the first time an account on each undefined plan id is
 * served, `warn` hears of it; later requests on that id are served without another word.
 */
export function accountPlans(plans: PlanTable, warn: (message: string, fields: { account: string; plan: string; served_as: string }) => void): AccountPlans {
  const reported = new Set<string>();
  return (account, id) => {
    const resolved = resolvePlan(plans, id ?? LOWEST_PLAN);
    if (resolved.fellBack && id !== undefined && !reported.has(id)) {
      reported.add(id);
      warn(undefinedPlanWarning(account, id, resolved.plan.id), { account, plan: id, served_as: resolved.plan.id });
    }
    return resolved.plan;
  };
}

export interface PlanOverride {
  quota?: number | null;
  per_minute?: number;
  jobs_concurrent?: number;
  jobs_storage_bytes?: number | null;
  index_documents?: number | null;
  index_bytes?: number | null;
  monitors?: number | null;
}

/**
 * Applies overrides on top of the defaults; a new plan id needs `quota` and `per_minute`, and
 * takes the job limits it does not name from the lowest plan.
 */
export function applyPlanOverrides(base: PlanTable, overrides: Record<string, PlanOverride>): PlanTable {
  const out: PlanTable = { ...base };
  // The lowest plan first: a new plan takes its job limits as overridden.
  const entries = Object.entries(overrides).sort(([a], [b]) => Number(b === LOWEST_PLAN) - Number(a === LOWEST_PLAN));
  for (const [id, o] of entries) {
    const prev = out[id];
    const quota = o.quota !== undefined ? o.quota : prev?.quota;
    const perMinute = o.per_minute ?? prev?.perMinute;
    if (quota === undefined || perMinute === undefined) {
      throw new Error(`plan "${id}" is new, so it needs both "quota" and "per_minute"`);
    }
    const lowest = Object.hasOwn(out, LOWEST_PLAN) ? out[LOWEST_PLAN] : DEFAULT_PLANS[LOWEST_PLAN]!;
    const jobsConcurrent = o.jobs_concurrent ?? prev?.jobsConcurrent ?? lowest!.jobsConcurrent;
    const jobsStorageBytes = o.jobs_storage_bytes !== undefined ? o.jobs_storage_bytes : (prev ?? lowest!).jobsStorageBytes;
    const indexDocuments = o.index_documents !== undefined ? o.index_documents : (prev ?? lowest!).indexDocuments;
    const indexBytes = o.index_bytes !== undefined ? o.index_bytes : (prev ?? lowest!).indexBytes;
    const monitors = o.monitors !== undefined ? o.monitors : (prev ?? lowest!).monitors;
    out[id] = { id, quota, perMinute, jobsConcurrent, jobsStorageBytes, indexDocuments, indexBytes, monitors };
  }
  return out;
}
