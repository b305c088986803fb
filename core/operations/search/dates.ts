/**
 * `start_date` / `end_date` (api.md §8): hints for the backends that can narrow by date, and
 * the exact filter on what comes back. A result outside the range is dropped and counted; a
 * result without a known date is kept only when the request says `undated: "keep"`, and
 * `meta` says which, so nothing is dropped silently.
 */
import type { Freshness } from "../../backends/types.ts";

const DAY_MS = 86_400_000;

export interface DateRange {
  start_date: string | null;
  end_date: string | null;
}

export interface DateFilterOutcome<T> {
  kept: T[];
  /** Dated results outside the range. */
  outOfRange: number;
  /** Results without a known date (kept or dropped, as asked). */
  undated: number;
}

/** The range in epoch ms: from the first instant of start_date to the last of end_date (UTC). */
export function rangeBounds(range: DateRange): { from: number; to: number } {
  return {
    from: range.start_date ? Date.parse(`${range.start_date}T00:00:00Z`) : -Infinity,
    to: range.end_date ? Date.parse(`${range.end_date}T00:00:00Z`) + DAY_MS - 1 : Infinity,
  };
}

export function filterByDate<T extends { published_at: string | null }>(
  results: readonly T[],
  range: DateRange,
  undated: "keep" | "drop",
): DateFilterOutcome<T> {
  const { from, to } = rangeBounds(range);
  const kept: T[] = [];
  let outOfRange = 0;
  let undatedCount = 0;
  for (const r of results) {
    const at = r.published_at ? Date.parse(r.published_at) : NaN;
    if (Number.isNaN(at)) {
      undatedCount++;
      if (undated === "keep") kept.push(r);
    } else if (at < from || at > to) {
      outOfRange++;
    } else {
      kept.push(r);
    }
  }
  return { kept, outOfRange, undated: undatedCount };
}

/**
 * The narrowest day/week/month/year window reaching back to start_date, for upstreams that
 * only take windows; null when the range starts more than a year ago (no window covers it)
 * or when there is no start.
 */
export function windowFor(range: DateRange, now: number): Freshness | null {
  if (!range.start_date) return null;
  const age = now - Date.parse(`${range.start_date}T00:00:00Z`);
  if (age <= DAY_MS) return "day";
  if (age <= 7 * DAY_MS) return "week";
  if (age <= 31 * DAY_MS) return "month";
  if (age <= 366 * DAY_MS) return "year";
  return null;
}

/** Both ends filled in, for upstreams that take an exact from–to range (Brave). */
export function exactRange(range: DateRange, now: number): { from: string; to: string } {
  const today = new Date(now).toISOString().slice(0, 10);
  return { from: range.start_date ?? "1990-01-01", to: range.end_date ?? today };
}
