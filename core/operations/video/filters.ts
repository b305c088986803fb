/**
 * The exact filters of a video search (api.md §6): `min_duration`, `max_duration` and
 * `freshness` hold for every returned result, measured on the values the result reports.
 * A result whose duration or date is unknown cannot be shown to pass, so it is left out
 * whenever that filter is set.
 */
import type { Freshness } from "../../backends/types.ts";
import { FRESHNESS_MS } from "../../ranking/merge.ts";

export interface VideoFilters {
  minDuration: number | null;
  maxDuration: number | null;
  freshness: Freshness | null;
}

export function passesFilters(
  video: { duration_seconds: number | null; published_at: string | null },
  filters: VideoFilters,
  now: number,
): boolean {
  const d = video.duration_seconds;
  if (filters.minDuration !== null && (d === null || d < filters.minDuration)) return false;
  if (filters.maxDuration !== null && (d === null || d > filters.maxDuration)) return false;
  if (filters.freshness) {
    const at = video.published_at ? Date.parse(video.published_at) : NaN;
    if (Number.isNaN(at) || at < now - FRESHNESS_MS[filters.freshness]) return false;
  }
  return true;
}
