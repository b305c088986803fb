/** The quota period is the calendar month in UTC (api.md §3). */

/** The month last asked about: every request asks for its period and reset, nearly always the same. */
let month = { from: 0, to: -1, period: "", resetAt: "" };

function monthOf(now: number): typeof month {
  if (now >= month.from && now < month.to) return month;
  const d = new Date(now);
  const from = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const to = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  month = { from, to, period: `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, "0")}`, resetAt: isoSeconds(to) };
  return month;
}

export function periodOf(now: number): string {
  return monthOf(now).period;
}

/** The UTC calendar day of an instant, e.g. `2026-11-05`: the unit of daily usage. */
let day = { from: 0, to: -1, day: "" };
export function dayOf(now: number): string {
  if (now >= day.from && now < day.to) return day.day;
  const from = now - (((now % 86_400_000) + 86_400_000) % 86_400_000);
  day = { from, to: from + 86_400_000, day: new Date(now).toISOString().slice(0, 10) };
  return day.day;
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
  return monthOf(now).resetAt;
}

/** The second last formatted: /health and last_used_at ask for the current one, over and over. */
let second = { from: 0, iso: "" };

/** ISO 8601 UTC without milliseconds. */
export function isoSeconds(ms: number): string {
  const from = ms - (((ms % 1000) + 1000) % 1000);
  if (from === second.from && second.iso !== "") return second.iso;
  second = { from, iso: formatSeconds(from) };
  return second.iso;
}

function formatSeconds(ms: number): string {
  const iso = new Date(ms).toISOString();
  // `2026-11-05T10:00:00.123Z`; years past 9999 have a longer, signed form.
  return iso.length === 24 ? `${iso.slice(0, 19)}Z` : iso.replace(/\.\d{3}Z$/, "Z");
}

export const WINDOW_MS = 60_000;
