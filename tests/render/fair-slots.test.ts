/**
 * The browser's page slots shared between accounts (#28 item 3): one account never holds every
 * slot, a freed slot goes to the waiting account holding the fewest (then the one served longest
 * ago), an account's own requests keep their order, and a request that gives up leaves the queue.
 */
import { describe, expect, it } from "vitest";
import { defaultShare, FairSlots } from "../../adapters/browser/fair-slots.ts";

const never = new AbortController().signal;

/** Takes a slot and records when it was granted, by name. */
function taker(slots: FairSlots, log: string[]) {
  return (account: string, name: string, signal = never) => {
    const got = slots.take(account, signal).then((release) => (log.push(name), release));
    got.catch(() => {});
    return got;
  };
}

describe("fair browser slots", () => {
  it("keeps a quarter of the slots (at least one) from any one account", () => {
    expect([1, 2, 3, 4, 8, 16, 64].map(defaultShare)).toEqual([1, 1, 2, 3, 6, 12, 48]);
  });

  it("one account fills its share and waits; another account's request gets the slot kept back at once", async () => {
    const slots = new FairSlots(4);
    const log: string[] = [];
    const take = taker(slots, log);
    const hog = [take("hog", "h1"), take("hog", "h2"), take("hog", "h3"), take("hog", "h4"), take("hog", "h5")];
    await Promise.all(hog.slice(0, 3));
    expect(slots.stats()).toEqual({ inUse: 3, waiting: 2, held: { hog: 3 } });
    await take("calm", "c1");
    expect(log).toEqual(["h1", "h2", "h3", "c1"]);
    expect(slots.stats()).toEqual({ inUse: 4, waiting: 2, held: { hog: 3, calm: 1 } });
    // A hog slot freed goes back to the hog's next request, in its order.
    (await hog[0]!)();
    await hog[3];
    expect(log).toEqual(["h1", "h2", "h3", "c1", "h4"]);
  });

  it("a freed slot goes to the waiting account holding the fewest, then to the one served longest ago", async () => {
    const slots = new FairSlots(2, 2);
    const log: string[] = [];
    const take = taker(slots, log);
    const a = [take("a", "a1"), take("a", "a2")];
    const waiting = [take("a", "a3"), take("a", "a4"), take("b", "b1"), take("c", "c1"), take("b", "b2")];
    const release = await Promise.all(a);
    expect(slots.stats().waiting).toBe(5);
    release[0]!(); // b and c hold none, a one: b, which waited first among them
    const b1 = await waiting[2]!;
    release[1]!(); // a and c hold none: c, never served
    const c1 = await waiting[3]!;
    b1(); // a holds none now, b none, c one: a was served longest ago
    const a3 = await waiting[0]!;
    c1(); // a one, b none: b
    await waiting[4];
    a3();
    await waiting[1];
    expect(log).toEqual(["a1", "a2", "b1", "c1", "a3", "b2", "a4"]);
    expect(slots.stats()).toEqual({ inUse: 2, waiting: 0, held: { b: 1, a: 1 } });
  });

  it("a request that gives up leaves the queue and takes nothing; giving a slot back twice counts once", async () => {
    const slots = new FairSlots(1);
    const log: string[] = [];
    const take = taker(slots, log);
    const first = await take("a", "a1");
    const quit = new AbortController();
    const leaving = take("b", "b1", quit.signal);
    const staying = take("c", "c1");
    quit.abort(new Error("deadline"));
    await expect(leaving).rejects.toThrow("deadline");
    expect(slots.stats().waiting).toBe(1);
    first();
    first();
    await staying;
    expect(log).toEqual(["a1", "c1"]);
    expect(slots.stats()).toEqual({ inUse: 1, waiting: 0, held: { c: 1 } });
    const gone = new AbortController();
    gone.abort(new Error("already"));
    await expect(slots.take("d", gone.signal)).rejects.toThrow("already");
  });
});
