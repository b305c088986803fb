/** The one fake clock of the tests: time moves only when a test says so, firing due timers in order. */
import type { Timers } from "../../core/backends/runner.ts";
import type { Clock } from "../../core/ports.ts";

/** Lets pending promise callbacks (fetch stubs, body reads) run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A clock whose time moves only when the test says so, firing due timers in order. */
export class FakeClock implements Clock, Timers {
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private nextId = 1;
  constructor(private t = Date.UTC(2026, 10, 22, 12, 0, 0)) {}

  now(): number {
    return this.t;
  }

  set(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.push({ at: this.t + Math.max(0, ms), fn, id });
    return id;
  }

  clear(handle: unknown): void {
    this.timers = this.timers.filter((timer) => timer.id !== handle);
  }

  pendingTimers(): number {
    return this.timers.length;
  }

  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    for (;;) {
      await flush();
      const due = this.timers.filter((timer) => timer.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.t = due.at;
      due.fn();
    }
    this.t = target;
    await flush();
  }
}
