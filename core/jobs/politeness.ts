/**
 * Good manners per host (api.md §9): at most N requests at once to one host (2 by default),
 * and the gap robots.txt's Crawl-delay asks for between the starts of two requests. robots.txt
 * is read once per origin and kept 10 minutes, unless its fetch got no answer at all: then the
 * next page asks again (and each such failure counts toward its host's streak, site-streaks.ts). One process: HostGate, in memory. Several
 * instances sharing jobs: SharedHostGate, which holds the limit and the delay for all of them
 * together through the job store (see README, "Crawling politely").
 */
import type { PagePort } from "../ports.ts";
import type { JobStore } from "../ports/jobs.ts";
import { fetchRobots, type Robots } from "./site-files.ts";

/** A slot on a host for one request; the returned function gives it back (once, however often called). */
export interface Gate {
  acquire(host: string, delayMs?: number, signal?: AbortSignal): Promise<() => void>;
  /** Resolves once the slots given back so far are free for every instance (a stopping server waits for it). */
  settled?(): Promise<void>;
}

interface HostState {
  active: number;
  nextStart: number;
  waiters: Array<() => void>;
}

export class HostGate implements Gate {
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

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };
    const t = setTimeout(done, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Longest pause between two asks for a slot while every slot on the host is held. */
const MAX_POLL_MS = 100;

/**
 * The per-host limit and Crawl-delay for every instance together. This process's requests to a
 * host first line up in memory (same limit, so only those that could go ask the store); then each
 * takes a slot in the store, which also keeps the host's next allowed start. A slot is leased for
 * `leaseMs` and renewed every third of it while held, so the slots of an instance that died come
 * back within `leaseMs`.
 */
export class SharedHostGate implements Gate {
  private readonly local: HostGate;
  private readonly held = new Set<string>();
  private readonly releasing = new Set<Promise<void>>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private n = 0;
  private readonly prefix = crypto.randomUUID();

  constructor(
    private readonly store: JobStore,
    private readonly perHost: number,
    private readonly leaseMs: number,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.local = new HostGate(perHost, now);
  }

  async acquire(host: string, delayMs = 0, signal?: AbortSignal): Promise<() => void> {
    const releaseLocal = await this.local.acquire(host, 0, signal);
    const holder = `${this.prefix}:${++this.n}`;
    try {
      // While every slot is held, ask again soon (a slot is given back when its request ends), backing off to MAX_POLL_MS.
      for (let pause = 5; ; ) {
        if (signal?.aborted) throw signal.reason;
        const wait = await this.store.takeHostSlot(host, holder, this.perHost, delayMs, this.now(), this.leaseMs);
        if (wait === 0) break;
        if (wait > 0) await sleep(wait, signal);
        else {
          await sleep(pause + Math.random() * pause, signal);
          pause = Math.min(pause * 2, MAX_POLL_MS);
        }
      }
    } catch (err) {
      releaseLocal();
      throw err;
    }
    this.held.add(holder);
    this.beat();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held.delete(holder);
      if (!this.held.size && this.timer) (clearInterval(this.timer), (this.timer = null));
      // The store's slot first, then this process's: a local waiter never asks the store while the slot is still taken.
      const gone = this.store.releaseHostSlot(holder).catch(() => {}).finally(releaseLocal);
      this.releasing.add(gone);
      void gone.finally(() => this.releasing.delete(gone));
    };
  }

  /** A slot left in the store by a stopped instance would hold one of the host's turns until its lease ran out. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.releasing]);
  }

  private beat(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.held.size) void this.store.renewHostSlots([...this.held], this.now() + this.leaseMs).catch(() => {});
    }, Math.max(100, Math.floor(this.leaseMs / 3)));
    (this.timer as { unref?: () => void }).unref?.();
  }
}

const ROBOTS_TTL_MS = 10 * 60_000;
const MAX_ORIGINS = 5000;

export class RobotsCache {
  private readonly entries = new Map<string, { at: number; robots: Promise<Robots> }>();

  /** `turn`: the order of the fetch's start among the job pages' requests (SiteStreaks.begin). */
  constructor(private readonly pages: PagePort, private readonly now: () => number = () => Date.now(), private readonly turn: () => number = () => 0) {}

  get(origin: string): Promise<Robots> {
    const hit = this.entries.get(origin);
    if (hit && this.now() - hit.at < ROBOTS_TTL_MS) return hit.robots;
    if (this.entries.size >= MAX_ORIGINS) this.entries.delete(this.entries.keys().next().value!);
    const asked = this.turn();
    const robots = fetchRobots(this.pages, origin).then((r): Robots => ({ ...r, asked }));
    this.entries.set(origin, { at: this.now(), robots });
    // No answer at all says the site is down now, not for 10 minutes: the next page asks again.
    void robots.then((r) => r.reached === false && this.entries.get(origin)?.robots === robots && this.entries.delete(origin));
    return robots;
  }
}
