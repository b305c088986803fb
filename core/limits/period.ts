/** The quota period is the calendar month in UTC (api.md §3). */

export function periodOf(now: number): string {
  const d = new Date(now);
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, "0")}`;
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
