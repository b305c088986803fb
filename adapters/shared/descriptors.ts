/**
 * The process's open file descriptors against its soft limit, from Linux's /proc, for /health
 * (#28 item 2): a process out of descriptors fails every page fetch, render and database call with
 * EMFILE, whoever sent it, and nothing else in /health would show it. Elsewhere there is no probe
 * and /health says `unknown` (/metrics still has prom-client's process_open_fds where it can read it).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { statPath } from "./stat.ts";

export type DescriptorProbe = () => { open: number; limit: number | null };

/** The soft "Max open files" of /proc/self/limits; null when unlimited. */
export function softFileLimit(limits: string): number | null | undefined {
  const m = /^Max open files\s+(\S+)/m.exec(limits);
  if (!m) return undefined;
  return m[1] === "unlimited" ? null : Number(m[1]);
}

/**
 * Undefined where it cannot be read: not Linux, or a runtime that keeps /proc from the server (Deno
 * asks for --allow-all to read /proc/self).
 */
export function descriptorProbe(proc = "/proc/self"): DescriptorProbe | undefined {
  try {
    if (!existsSync(`${proc}/fd`) || !existsSync(`${proc}/limits`)) return undefined;
    readdirSync(`${proc}/fd`);
  } catch {
    return undefined;
  }
  // Kept from the last read that worked: at the limit, reading the file itself needs a descriptor.
  let limit: number | null = null;
  // One read per turn of the event loop, for every /health request answered in it: a read and a
  // listing of /proc per request were two fifths of a /health request's CPU under load (issue #33).
  let thisTurn: { open: number; limit: number | null } | null = null;
  const forget = () => (thisTurn = null);
  // The limit changes only when someone sets it (setrlimit, prlimit): read again at most once a
  // second, where the count of open descriptors is listed afresh each turn (a third of the probe).
  let limitReadAt = -Infinity;
  // Linux 6.2 and later give the number of open descriptors as the size of /proc/self/fd: one
  // stat, which opens nothing, where a listing opens the directory, reads every entry and (on
  // Deno) sorts them, a tenth of a /health request's CPU there under load (issue #33). Used only
  // where the two agree at start (an older kernel says 0); otherwise the listing, as before.
  const bySize = (() => {
    try {
      const size = statSync(`${proc}/fd`).size;
      return size > 0 && Math.abs(size - (readdirSync(`${proc}/fd`).length - 1)) <= 1;
    } catch {
      return false;
    }
  })();
  const count = bySize ? () => statPath(`${proc}/fd`).size : () => Math.max(0, readdirSync(`${proc}/fd`).length - 1);
  return () => {
    if (thisTurn) return thisTurn;
    try {
      const now = performance.now();
      if (now - limitReadAt >= 1000) {
        const read = softFileLimit(readFileSync(`${proc}/limits`, "utf8"));
        if (read !== undefined) limit = read;
        limitReadAt = now;
      }
      // A listing's own descriptor is in it; a stat opens none.
      thisTurn = { open: count(), limit };
      queueMicrotask(forget);
      return thisTurn;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // No descriptor left to look with: that is the answer.
      if ((code === "EMFILE" || code === "ENFILE") && limit !== null) return { open: limit, limit };
      throw err;
    }
  };
}
