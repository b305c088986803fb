/** The quota period is the calendar month in UTC (api.md §3). */

export function periodOf(now: number): string {
  const d = new Date(now);
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, "0")}`;
}

/** The UTC calendar day of an instant, e.g. `2026-11-05`: the unit of daily usage. */
export function dayOf(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** Every day of `now`'s month up to and including its own day, oldest first. */
export function daysSoFar(now: number): string[] {
  const d = new Date(now);
  const days: string[] = [];
  for (let i = 1; i <= d.getUTCDate(); i++) days.push(dayOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), i)));
  return days;
}

/** First instant of the next month, e.g. `2026-12-01T00:00:00Z`. */
export function periodResetAt(now: number): string {
  const d = new Date(now);
  const next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return isoSeconds(next);
}

/** ISO 8601 UTC without milliseconds. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export const WINDOW_MS = 60_000;
