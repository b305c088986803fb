/** Whether the backends' report changed since the last turn of /health, which keeps its JSON while it has not (health.ts). */
import type { BackendHealth } from "../backends/runner.ts";

/**
 * A backend report's ids, each with its count of members, and the members' names and values, in
 * their order, when every value is a string or a number (as `BackendHealth` has them; else null):
 * two reports with equal lists serialize alike. A copy, so a report changed in place after it was
 * read is still seen as changed.
 */
export function reportValues(report: Record<string, BackendHealth>): Array<string | number> | null {
  const out: Array<string | number> = [];
  for (const id in report) {
    const at = out.push(id, 0) - 1;
    const b = report[id] as unknown as Record<string, unknown>;
    let n = 0;
    for (const key in b) {
      const v = b[key];
      if (typeof v !== "string" && typeof v !== "number") return null;
      out.push(key, v);
      n++;
    }
    out[at] = n;
  }
  return out;
}

/** Whether `values` is what `reportValues` gives for `report`, without making its list. */
export function sameValues(values: Array<string | number>, report: Record<string, BackendHealth>): boolean {
  let i = 0;
  for (const id in report) {
    if (values[i] !== id) return false;
    const at = i + 1;
    i += 2;
    const b = report[id] as unknown as Record<string, unknown>;
    let n = 0;
    for (const key in b) {
      if (values[i++] !== key || values[i++] !== b[key]) return false;
      n++;
    }
    if (values[at] !== n) return false;
  }
  return i === values.length;
}
