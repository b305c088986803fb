/**
 * A value a foreign service takes that Quarry cannot honour as asked (a limit past Quarry's
 * maximum, a timeout under its minimum): applied at Quarry's bound and said in the answer's
 * `quarry.clamped`, a field the clients do not read, so nothing is changed silently. Values the
 * service itself refuses are refused before this, as it refuses them.
 */
export interface Clamped {
  option: string;
  requested: number;
  applied: number;
  reason: string;
}

/** `requested` within [min, max]; when it is not, the bound applied is recorded in `clamped`. */
export function bounded(clamped: Clamped[], option: string, requested: number, min: number, max: number, reason: string): number {
  const applied = Math.min(max, Math.max(min, requested));
  if (applied !== requested) clamped.push({ option, requested, applied, reason });
  return applied;
}

/** `requested` up to `max`; past it, `max`, recorded in `clamped`. */
export function capped(clamped: Clamped[], option: string, requested: number, max: number, reason: string): number {
  return bounded(clamped, option, requested, -Infinity, max, reason);
}

/** One sentence per value applied otherwise than asked, for a field such as Firecrawl's `warning`. */
export const clampedWords = (clamped: Clamped[]): string =>
  clamped.map((c) => `Quarry applied ${c.option} ${c.applied} instead of ${c.requested}: ${c.reason}.`).join(" ");
