import { describe, expect, it } from "vitest";
import { HostGate } from "../../core/jobs/politeness.ts";

/** The gate's own spacing, measured where it decides (the HTTP crawl test sees it through a loaded server). */
describe("HostGate", () => {
  it("lets at most 2 requests at a time through to one host, and starts them at least the Crawl-delay apart", async () => {
    const gate = new HostGate(2);
    const starts: number[] = [];
    let active = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        const release = await gate.acquire("site.test", 40);
        starts.push(performance.now());
        active++;
        peak = Math.max(peak, active);
        await new Promise((r) => setTimeout(r, 15));
        active--;
        release();
      }),
    );
    expect(peak).toBeLessThanOrEqual(2);
    const gaps = starts.slice(1).map((s, i) => s - starts[i]!);
    // Timers may fire late, never early (1 ms for rounding between clocks).
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(39);
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
