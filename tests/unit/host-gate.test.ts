import { describe, expect, it, vi } from "vitest";
import { HostGate, SharedHostGate } from "../../core/jobs/politeness.ts";
import { MemoryJobStore } from "../../adapters/jobs/memory-store.ts";

/** The gate's own spacing, measured where it decides (the HTTP crawl test sees it through a loaded server). */
describe("HostGate", () => {
  it("lets at most 2 requests at a time through to one host, and starts them at least the Crawl-delay apart", async () => {
    // Fake timers: each start is read on the clock the gate decides by, with no event-loop lag between
    // the gate's decision and the test's reading (on a loaded machine a late reading of one start
    // made the next gap look 4 ms short).
    vi.useFakeTimers();
    try {
      const gate = new HostGate(2);
      const starts: number[] = [];
      let active = 0;
      let peak = 0;
      const all = Promise.all(
        Array.from({ length: 8 }, async () => {
          const release = await gate.acquire("site.test", 40);
          starts.push(Date.now());
          active++;
          peak = Math.max(peak, active);
          await new Promise((r) => setTimeout(r, 15));
          active--;
          release();
        }),
      );
      await vi.runAllTimersAsync();
      await all;
      expect(starts).toHaveLength(8);
      expect(peak).toBeLessThanOrEqual(2);
      const gaps = starts.slice(1).map((s, i) => s - starts[i]!);
      for (const g of gaps) expect(g).toBeGreaterThanOrEqual(40);
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps hosts apart: another host is not held back by the first one's delay", async () => {
    const gate = new HostGate(2);
    const a = await gate.acquire("a.test", 10_000);
    const started = performance.now();
    const b = await gate.acquire("b.test", 10_000);
    expect(performance.now() - started).toBeLessThan(1000);
    a();
    b();
  });

  it("an aborted waiter leaves the line without taking a slot", async () => {
    const gate = new HostGate(1);
    const first = await gate.acquire("site.test");
    const ac = new AbortController();
    const waiting = gate.acquire("site.test", 0, ac.signal);
    ac.abort(new Error("cancelled"));
    await expect(waiting).rejects.toThrow("cancelled");
    first();
    const next = await gate.acquire("site.test");
    next();
  });
});

/** Several instances through one store (the store contract covers the SQL stores' side of it). */
describe("SharedHostGate", () => {
  it("holds the limit and the Crawl-delay for three gates together", async () => {
    const store = new MemoryJobStore();
    // The starts the store granted, on the clock the gates gave it (the time a waiter then resumes adds the event loop's jitter).
    const starts: number[] = [];
    const take = store.takeHostSlot.bind(store);
    store.takeHostSlot = async (host, holder, perHost, delayMs, now, leaseMs) => {
      const wait = await take(host, holder, perHost, delayMs, now, leaseMs);
      if (wait === 0) starts.push(now);
      return wait;
    };
    const gates = [0, 1, 2].map(() => new SharedHostGate(store, 2, 10_000));
    let active = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const release = await gates[i % 3]!.acquire("site.test", 20);
        active++;
        peak = Math.max(peak, active);
        await new Promise((r) => setTimeout(r, 60));
        active--;
        release();
      }),
    );
    expect(peak).toBeLessThanOrEqual(2);
    starts.sort((a, b) => a - b);
    expect(starts).toHaveLength(12);
    for (const g of starts.slice(1).map((s, i) => s - starts[i]!)) expect(g).toBeGreaterThanOrEqual(20);
  });

  it("gives a dead gate's slots back when their lease runs out, and not before", async () => {
    const store = new MemoryJobStore();
    const dead = new SharedHostGate(store, 2, 300);
    await dead.acquire("site.test");
    await dead.acquire("site.test");
    // The dead one's renewals stop with it; a live one's keep its slot.
    clearInterval((dead as unknown as { timer: ReturnType<typeof setInterval> }).timer);
    const live = new SharedHostGate(store, 2, 300);
    const t0 = performance.now();
    const a = await live.acquire("site.test");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    const b = await live.acquire("site.test");
    // Both slots are the live gate's now, renewed past their lease.
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error("still held")), 700);
    await expect(new SharedHostGate(store, 2, 300).acquire("site.test", 0, ac.signal)).rejects.toThrow("still held");
    a();
    b();
  });
});
