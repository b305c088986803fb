/**
 * The CachePort contract: every cache (in process, Redis) must pass it. Above all a get answers
 * only the exact key that was set: unstorage, under both adapters, cuts keys at `?` and folds
 * `/`, `\` and repeated `:`, which once made one scrape answer with another page (issue #17).
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { CachePort } from "../../core/ports.ts";

export interface CacheUnderTest {
  cache: CachePort;
  /** Lets `ms` pass for the cache: a fake clock in process, real waiting for Redis. */
  pass(ms: number): Promise<void>;
}

/** Keys that unstorage's normalisation would fold into one another, and other awkward ones. */
export const AWKWARD_KEYS = [
  "scrape:http://host/item?id=1",
  "scrape:http://host/item?id=2",
  "scrape:http://host/item",
  'search:{"query":"tagged? first","max_results":5}',
  'search:{"query":"tagged? second","max_results":7}',
  "a/b", "a:b", "a\\b", "a::b", ":a", "a:", "a",
  "ключ:日本語:🦊", "ключ:日本語:🦊?x",
  "%3F", "?", " ", "",
  `long:${"x".repeat(5_000)}?1`, `long:${"x".repeat(5_000)}?2`,
];

export function cacheContract(name: string, make: (limits: { maxEntryBytes: number }) => Promise<CacheUnderTest>) {
  describe(`Cache contract: ${name}`, () => {
    let c: CacheUnderTest;
    beforeEach(async () => {
      c = await make({ maxEntryBytes: 64 * 1024 });
    });

    it("misses a key never set", async () => {
      expect(await c.cache.get("never:set")).toBeNull();
    });

    it("answers every key with its own value, whatever characters the keys hold", async () => {
      await Promise.all(AWKWARD_KEYS.map((k, i) => c.cache.set(k, { i, key: k }, 60)));
      for (const [i, k] of AWKWARD_KEYS.entries()) {
        expect(await c.cache.get(k), JSON.stringify(k).slice(0, 60)).toEqual({ i, key: k });
      }
    });

    it("a key that only differs after a `?` is a miss, not another key's value", async () => {
      await c.cache.set("scrape:http://host/item?id=1", "one", 60);
      expect(await c.cache.get("scrape:http://host/item?id=2")).toBeNull();
      expect(await c.cache.get("scrape:http://host/item")).toBeNull();
      expect(await c.cache.get("scrape:http://host/item?id=1")).toBe("one");
    });

    it("round-trips values as JSON: objects, arrays, unicode, numbers, booleans", async () => {
      const value = { text: "naïve 日本 🦊 \u2028", n: 1.5, ok: false, list: [1, "two", null], nested: { a: { b: [] } } };
      await c.cache.set("value", value, 60);
      expect(await c.cache.get("value")).toEqual(value);
    });

    it("a later set replaces the value", async () => {
      await c.cache.set("k", 1, 60);
      await c.cache.set("k", 2, 60);
      expect(await c.cache.get("k")).toBe(2);
    });

    it("forgets an entry once its TTL has passed, and only then", async () => {
      await c.cache.set("short", "s", 1);
      await c.cache.set("long", "l", 60);
      expect(await c.cache.get("short")).toBe("s");
      await c.pass(1_600);
      expect(await c.cache.get("short")).toBeNull();
      expect(await c.cache.get("long")).toBe("l");
    });

    it("does not keep an entry over the size limit, and keeps the others", async () => {
      await c.cache.set("small", "s", 60);
      await c.cache.set("huge", "x".repeat(100 * 1024), 60);
      expect(await c.cache.get("huge")).toBeNull();
      expect(await c.cache.get("small")).toBe("s");
      await c.cache.set("just-under", "y".repeat(60 * 1024), 60);
      expect(await c.cache.get("just-under")).toBe("y".repeat(60 * 1024));
    });

    it("counts its entries", async () => {
      const before = (await c.cache.stats()).entries;
      await c.cache.set("counted:1", 1, 60);
      await c.cache.set("counted:2", 2, 60);
      const after = await c.cache.stats();
      expect(after.entries - before).toBe(2);
      expect(after.bytes).toBeGreaterThan(0);
    });
  });
}
