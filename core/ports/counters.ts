/** The counters port (see core/ports.ts, which re-exports it with the others): admission, quota and usage. */

export interface AdmitRequest {
  keyId: string;
  now: number;
  /** Admitted requests allowed in any rolling window. */
  perMinute: number;
  windowMs: number;
  /** Calendar period the quota is counted in, e.g. `2026-11`. */
  period: string;
  /** Usage group of a metered operation; null for unmetered requests (no quota check, no count). */
  group: string | null;
  /** Monthly quota; null = unlimited. Ignored when group is null. */
  quota: number | null;
  /**
   * false: quota only. The per-minute window is neither checked nor counted (a job's own pages,
   * admitted long after the request that started the job). Default true.
   */
  window?: boolean;
  /**
   * true: the caller will read this key's use of `period` next (GET /v1/usage). A store that can
   * read it in the admission's own round trip answers it as `usage` (read atomically with the
   * decision, after the request arrived: as fresh as a read of its own); one that cannot leaves
   * it out, and the caller reads `usage()` as before.
   */
  withUsage?: boolean;
  /** true: the caller may take the admission back (`withdraw`); counters that can answer its `entry`. */
  withdrawable?: boolean;
}

export type AdmitResult =
  /**
   * `ticket`: the reservation a metered admission holds. It counts toward the quota at once,
   * and becomes use only when committed (the answer is ready); released or expired, it is
   * nothing. Null for unmetered requests. `entry`: the admission's place in the window, for
   * `withdraw`, when asked `withdrawable` (counters that have it).
   */
  | { ok: true; used: number; ticket: string | null; usage?: UsageCount; entry?: string }
  | { ok: false; reason: "rate_limited"; retryAfterMs: number; used: number }
  | { ok: false; reason: "quota_exceeded"; used: number };

/** How long a reservation holds when its instance never settles it (longer than any deadline). */
export const RESERVATION_TTL_MS = 120_000;

/**
 * A reservation ticket names what it reserves, so any instance can settle it without a lookup:
 * the key, the month, the usage group, a unique id, and the UTC day of admission (`2026-11-05`),
 * the day its use is counted on.
 */
export function makeTicket(keyId: string, period: string, group: string, id: string, day: string): string {
  return `${keyId}|${period}|${group}|${id}|${day}`;
}

export type TicketParts = Readonly<{ keyId: string; period: string; group: string; id: string; day: string }>;

export function parseTicket(ticket: string): TicketParts {
  const [keyId, period, group, id, day] = ticket.split("|");
  // A ticket issued before days were recorded (a lease alive across an upgrade) counts on the month's first day.
  return { keyId, period, group, id, day: day || `${period}-01` };
}

export interface UsageCount {
  used: number;
  groups: Record<string, number>;
}

/** One key's committed use per UTC day of a month: day (`2026-11-05`) → group → count. Days without use are absent. */
export type DailyUsage = Record<string, Record<string, number>>;

/**
 * Atomic admission: the per-minute sliding window and the monthly quota are checked and
 * consumed together, so concurrent requests can never over-admit. A refused request
 * consumes nothing. A metered admission is a reservation (a lease of RESERVATION_TTL_MS)
 * until its answer is ready: an instance killed mid-request leaves leases that expire, so
 * only answered requests are ever counted.
 */
export interface Counters {
  admit(req: AdmitRequest): Promise<AdmitResult>;
  /** Turns a reservation into use (the answer is ready); returns the month's use after it. */
  commit(ticket: string): Promise<number>;
  /**
   * Optional: takes an admission back whole, its window entry and its reservation, as if it had
   * not been made (one made beside the key's confirmation, which then refused the key or changed
   * its limits: gateway/speculate.ts). Counters that have it answer `entry` to a `withdrawable` admission.
   */
  withdraw?(req: AdmitRequest, admitted: { ticket: string | null; entry?: string }): Promise<void>;
  /** Drops a reservation: the request counts toward nothing (a 5xx answer). */
  release(ticket: string): Promise<void>;
  /** Gives one committed unit back (a stream failed after its 200), from the month and its admission `day`. Never below zero. */
  refund(keyId: string, period: string, group: string, day: string): Promise<void>;
  usage(keyId: string, period: string): Promise<UsageCount>;
  /** Committed use per UTC day of admission, written with the month's count (the days add up to it). */
  daily(keyIds: string[], period: string): Promise<Record<string, DailyUsage>>;
  /**
   * Checks the store the counts live in, when it is not the key store's database (Redis): without
   * it no request can be admitted, so /health is unavailable. Absent: the counts are in the database.
   */
  ping?(): Promise<void>;
}
