/**
 * A path's inode and size, for /health's per-turn checks (the SQLite file's identity, the count of
 * open descriptors as the size of /proc/self/fd). On Deno, node:fs's statSync builds a whole Stats
 * from Deno's own stat, every field converted: three times Deno.statSync's cost there (24–26 against
 * 8 µs a call in a loop, issue #33), twice in each turn of /health. Deno's stat is used where it
 * answers; whatever it throws is asked of node:fs again, so a failure keeps node's error and code.
 */
import { statSync } from "node:fs";

interface DenoStat {
  statSync(path: string): { ino: number | null; size: number };
}

const deno = (globalThis as { Deno?: Partial<DenoStat> }).Deno;
const denoStat = typeof deno?.statSync === "function" ? (deno as DenoStat) : null;

export function statPath(path: string): { ino: number | null; size: number } {
  if (denoStat) {
    try {
      return denoStat.statSync(path);
    } catch {
      // node:fs says what went wrong, in its terms
    }
  }
  return statSync(path);
}
