/**
 * coalesce.ts `serialBatched` (PostgreSQL admissions, #33): a turn's calls go in groups of at most
 * `max`, in the order asked, one group at a time; calls asked while a group is in flight form the
 * next; a group's failure stays that group's. No clock: the groups are observed as `all` sees them.
 */
import { describe, expect, it } from "vitest";
import { serialBatched } from "../../adapters/storage/coalesce.ts";

class Refused extends Error {}

function recorder(opts: { fail?: (calls: number[]) => Error | null } = {}) {
  const groups: number[][] = [];
  const alone: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const call = serialBatched<number, string>(
    async (calls) => {
      groups.push(calls);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight--;
      const err = opts.fail?.(calls);
      if (err) throw err;
      return calls.map((c) => `all:${c}`);
    },
    async (c) => {
      alone.push(c);
      if (c === 13) throw new Error("thirteen fails alone too");
      return `one:${c}`;
    },
    (err) => err instanceof Refused,
    4,
  );
  return { call, groups, alone, maxInFlight: () => maxInFlight };
}

describe("serialBatched", () => {
  it("splits a turn into groups of at most max, in order, one in flight at a time", async () => {
    const r = recorder();
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => r.call(i)));
    expect(answers).toEqual(Array.from({ length: 10 }, (_, i) => `all:${i}`));
    expect(r.groups).toEqual([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]);
    expect(r.maxInFlight()).toBe(1);
  });

  it("calls asked while a group is in flight form the next group, which starts after it; a lone call goes alone", async () => {
    const groups: number[][] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const call = serialBatched<number, string>(
      async (calls) => {
        groups.push(calls);
        if (calls[0] === 0) await held;
        return calls.map((c) => `all:${c}`);
      },
      async (c) => `one:${c}`,
      () => false,
      4,
    );
    const first = Promise.all([call(0), call(1)]);
    while (!groups.length) await new Promise((r) => setImmediate(r));
    const later = Promise.all([call(2), call(3)]);
    const lone = call(4);
    await new Promise((r) => setImmediate(r));
    expect(groups).toEqual([[0, 1]]); // 2, 3 and 4 wait for the group in flight
    release();
    expect(await first).toEqual(["all:0", "all:1"]);
    expect(await later).toEqual(["all:2", "all:3"]);
    expect(await lone).toBe("all:4");
    expect(groups).toEqual([[0, 1], [2, 3, 4]]);
    expect(await call(5)).toBe("one:5");
  });

  it("a group the store refused whole runs again call by call; other groups keep their answers", async () => {
    const r = recorder({ fail: (calls) => (calls.includes(13) ? new Refused("rolled back") : null) });
    const settled = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => r.call(10 + i)));
    expect(settled.map((s) => (s.status === "fulfilled" ? s.value : "failed"))).toEqual([
      "one:10", "one:11", "one:12", "failed", "all:14", "all:15", "all:16", "all:17",
    ]);
    expect(r.alone).toEqual([10, 11, 12, 13]);
  });

  it("a failure of unknown outcome fails that group's calls only, and the queue goes on", async () => {
    const r = recorder({ fail: (calls) => (calls[0] === 0 ? new Error("connection lost") : null) });
    const settled = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => r.call(i)));
    expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected", "rejected", "rejected", "fulfilled", "fulfilled"]);
    expect(r.alone).toEqual([]);
    expect(await r.call(99)).toBe("one:99");
  });
});
