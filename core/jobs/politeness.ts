/**
 * Good manners per host (api.md §9): at most N requests at once to one host (2 by default),
 * and the gap robots.txt's Crawl-delay asks for between the starts of two requests. robots.txt
 * is read once per origin and kept 10 minutes. Both are per process; with several instances
 * each keeps its own count (see README, "Crawling politely").
 */
import type { PagePort } from "../ports.ts";
import { fetchRobots, type Robots } from "./site-files.ts";

interface HostState {
  active: number;
  nextStart: number;
  waiters: Array<() => void>;
}

export class HostGate {
  private readonly hosts = new Map<string, HostState>();

  /** `perHost` 0 = no limit (benchmarks only). */
  constructor(private readonly perHost: number, private readonly now: () => number = () => Date.now()) {}

  /** Waits for a slot on `host`, and for the crawl delay since the last start; returns the release. */
  async acquire(host: string, delayMs = 0, signal?: AbortSignal): Promise<() => void> {
    let h = this.hosts.get(host);
    if (!h) this.hosts.set(host, (h = { active: 0, nextStart: 0, waiters: [] }));
    const state = h;
    while (this.perHost > 0 && state.active >= this.perHost) {
      if (signal?.aborted) throw signal.reason;
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        // An abandoned waiter leaves the line; it never takes (or swallows) a slot.
        const onAbort = () => {
          const i = state.waiters.indexOf(wake);
          if (i >= 0) state.waiters.splice(i, 1);
          reject(signal!.reason);
        };
        state.waiters.push(wake);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
    state.active++;
    // Spaced by when requests really start: the first to wake after the gap takes the turn and
    // the others sleep again, so a late timer never lets two requests through close together.
    while (delayMs > 0) {
      const now = this.now();
      if (now >= state.nextStart) {
        state.nextStart = now + delayMs;
        break;
      }
      await new Promise((r) => setTimeout(r, state.nextStart - now));
      if (signal?.aborted) {
        state.active--;
        state.waiters.shift()?.();
        throw signal.reason;
      }
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      state.active--;
      state.waiters.shift()?.();
      if (state.active === 0 && state.waiters.length === 0 && state.nextStart <= this.now()) this.hosts.delete(host);
    };
  }
}

const ROBOTS_TTL_MS = 10 * 60_000;
const MAX_ORIGINS = 5000;

export class RobotsCache {
  private readonly entries = new Map<string, { at: number; robots: Promise<Robots> }>();

  constructor(private readonly pages: PagePort, private readonly now: () => number = () => Date.now()) {}

  get(origin: string): Promise<Robots> {
    const hit = this.entries.get(origin);
    if (hit && this.now() - hit.at < ROBOTS_TTL_MS) return hit.robots;
    if (this.entries.size >= MAX_ORIGINS) this.entries.delete(this.entries.keys().next().value!);
    const robots = fetchRobots(this.pages, origin);
    this.entries.set(origin, { at: this.now(), robots });
    return robots;
  }
}
