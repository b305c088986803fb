/**
 * Leases on claimed frontier entries, kept alive while their tasks run. With a shared queue a
 * claim is held only as long as QUARRY_JOB_RECOVERY unless renewed, so the pages a dead instance
 * held come back soon; every live task's lease is renewed together, every third of that time.
 * One process needs no lease: its claims are its own until it restarts.
 *
 * A renewal succeeds only against the lease its caller last knew, so renewals take turns: the
 * timer's and a task's own (right before its request) at once would otherwise see one succeed and
 * the other report the page lost, and a page nobody works would stay claimed until its lease ran out.
 */
import type { JobTask } from "../ports/job-model.ts";
import type { JobStore } from "../ports/jobs.ts";

/** A claimed entry's lease kept alive. */
export interface Heartbeat {
  stop(): void;
  /** Renews the lease now; false when the entry is no longer this task's (its lease ran out meanwhile). */
  holds(): Promise<boolean>;
}

const FREE: Heartbeat = { stop: () => {}, holds: async () => true };

export class LeaseKeeper {
  private readonly beating = new Set<{ task: JobTask; lease: number; lost: boolean }>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: JobStore,
    private readonly leaseMs: number,
    private readonly now: () => number,
    /** False for one process: no leases to keep. */
    private readonly shared: boolean,
  ) {}

  /** Keeps the lease of `task` (running out at `lease`) alive until stopped. */
  heartbeat(task: JobTask, lease: number): Heartbeat {
    if (!this.shared) return FREE;
    const held = { task, lease, lost: false };
    this.beating.add(held);
    const renew = (list: Array<typeof held>): Promise<void> => {
      const next = this.turn.then(async () => {
        // Read when its turn comes: the renewal before it may have moved the leases on.
        const live = list.filter((h) => !h.lost);
        if (!live.length) return;
        const until = this.now() + this.leaseMs;
        const still = await this.store.renew(live.map(({ task, lease }) => ({ task, lease })), until);
        live.forEach((h, i) => (still[i] ? (h.lease = until) : (h.lost = true)));
      });
      this.turn = next.catch(() => {});
      return next;
    };
    this.timer ??= setInterval(() => {
      const list = [...this.beating].filter((h) => !h.lost);
      if (list.length) void renew(list).catch(() => {});
    }, Math.max(100, Math.floor(this.leaseMs / 3)));
    (this.timer as { unref?: () => void }).unref?.();
    return {
      stop: () => {
        this.beating.delete(held);
        if (!this.beating.size) this.stop();
      },
      holds: async () => {
        if (!held.lost) await renew([held]);
        return !held.lost;
      },
    };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
