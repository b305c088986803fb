/**
 * The human-readable values of YouTube's search cards, as served with `hl=en`: durations
 * ("1:17:43"), view counts ("390,201 views", "1.2M views", "No views") and relative upload
 * times ("3 weeks ago", "Streamed 14 minutes ago"). Relative times become an ISO date given
 * `now`; they are approximate by nature (the card rounds down to the unit shown).
 */

/** "47:20" → 2840, "1:17:43" → 4663; null for anything else ("LIVE", "SHORTS", ""). */
export function parseDuration(text: string): number | null {
  const m = /^\s*(?:(\d+):)?(\d{1,2}):(\d{2})\s*$/.exec(text);
  if (!m) return null;
  const [, h = "0", min, s] = m;
  return Number(h) * 3600 + Number(min) * 60 + Number(s);
}

const SUFFIX: Record<string, number> = { k: 1e3, m: 1e6, b: 1e9 };

/** "390,201 views" → 390201, "390k views" → 390000, "No views" → 0; null when unreadable. */
export function parseViewCount(text: string): number | null {
  const t = text.trim().toLowerCase();
  if (/^no views?$/.test(t)) return 0;
  const exact = /^([\d,.\s\u00a0\u202f]+)\s*views?$/.exec(t);
  if (exact) {
    const digits = exact[1]!.replace(/[^\d]/g, "");
    return digits ? Number(digits) : null;
  }
  const short = /^(\d+(?:\.\d+)?)\s*([kmb])\s*views?$/.exec(t);
  if (short) return Math.round(Number(short[1]) * SUFFIX[short[2]!]!);
  return null;
}

const UNIT_MS = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS | "month" | "year";

const RELATIVE = /(\d+)\s+(second|minute|hour|day|week|month|year)s?\s+ago\b/i;

/** Seconds-precision ISO 8601 UTC, the format every backend returns. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * "3 weeks ago" (optionally prefixed "Streamed" / "Premiered") → `now` minus that span, as
 * ISO. Months and years are calendar steps. The card rounds down, so the real upload is at
 * most one unit earlier than the date returned. null when the text is not a relative time.
 */
export function relativeDateToIso(text: string, now: number): string | null {
  const m = RELATIVE.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = m[2]!.toLowerCase() as Unit;
  if (unit === "month" || unit === "year") {
    const d = new Date(now);
    const months = unit === "year" ? 12 * n : n;
    const targetMonth = d.getUTCMonth() - months;
    // Clamp the day so that "1 month ago" on 31 March is 28/29 February, not 3 March.
    const lastDay = new Date(Date.UTC(d.getUTCFullYear(), targetMonth + 1, 0)).getUTCDate();
    d.setUTCDate(1);
    d.setUTCMonth(targetMonth);
    d.setUTCDate(Math.min(new Date(now).getUTCDate(), lastDay));
    return isoSeconds(d.getTime());
  }
  return isoSeconds(now - n * UNIT_MS[unit]);
}

/** True for cards of past live streams ("Streamed 3 hours ago"). */
export function isStreamedText(text: string): boolean {
  return /^\s*streamed\b/i.test(text);
}
