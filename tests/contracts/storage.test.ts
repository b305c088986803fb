/** Runs the port contracts against every storage implementation available here. */
import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import { describe, expect, it } from "vitest";
import { KvKeyStore } from "../../adapters/storage/kv-key-store.ts";
import { KvSources } from "../../adapters/storage/kv-sources.ts";
import { LruCache } from "../../adapters/storage/lru-cache.ts";
import { MemoryCounters } from "../../adapters/storage/memory-counters.ts";
import { buildPorts } from "../../adapters/shared/bootstrap.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";
import { parseConfig } from "../../core/config.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { onCleanup, tempDir } from "../helpers/temp.ts";
import { cacheContract } from "./cache-contract.ts";
import { countersContract } from "./counters-contract.ts";
import { keyStoreContract } from "./key-store-contract.ts";
import { sourcesContract } from "./sources-contract.ts";

const sqlite = async (now: () => number = Date.now) => {
  const built = await buildPorts({ ...parseConfig({}), dataDir: tempDir("quarry-contract-") }, nodeRuntime, new MemoryLogger(), { now });
  onCleanup(() => built.close()); // runs before its folder is removed
  return built.ports;
};

keyStoreContract("memory (unstorage memory driver)", async () => new KvKeyStore(createStorage({ driver: memoryDriver() })));
keyStoreContract("SQLite (unstorage db0 driver)", async () => (await sqlite()).keys);
countersContract("memory", async () => new MemoryCounters());
countersContract("SQLite", async () => (await sqlite()).counters);
sourcesContract("memory (unstorage memory driver)", async (now) => new KvSources(createStorage({ driver: memoryDriver() }), now));
sourcesContract("SQLite (unstorage db0 driver)", async (now) => (await sqlite(now)).sources);

/** The in-process cache on a clock the test moves. */
function lruOnFakeClock(limits: ConstructorParameters<typeof LruCache>[1] = {}) {
  let now = Date.UTC(2026, 10, 23);
  const cache = new LruCache(() => now, limits);
  return { cache, pass: async (ms: number) => void (now += ms) };
}
cacheContract("in process (LRU)", async (limits) => lruOnFakeClock(limits));

describe("in-process cache bounds", () => {
  it("keeps the bytes it holds under maxBytes, dropping the least recently used first", async () => {
    const { cache } = lruOnFakeClock({ maxBytes: 100_000, maxEntryBytes: 20_000 });
    for (let i = 0; i < 30; i++) {
      await cache.set(`page:${i}`, "p".repeat(10_000), 60);
      if (i >= 1) await cache.get("page:0"); // page 0 stays in use
      expect((await cache.stats()).bytes).toBeLessThanOrEqual(100_000);
    }
    expect(await cache.get("page:0")).not.toBeNull();
    expect(await cache.get("page:1")).toBeNull();
    expect(await cache.get("page:29")).not.toBeNull();
    expect((await cache.stats()).entries).toBeLessThan(10);
  });

  it("counts the bytes it keeps (UTF-8 of the entry): three a character for CJK text, one for ASCII", async () => {
    const latin = lruOnFakeClock();
    const cjk = lruOnFakeClock();
    await latin.cache.set("k", "a".repeat(10_000), 60);
    await cjk.cache.set("k", "日".repeat(10_000), 60);
    const a = (await latin.cache.stats()).bytes;
    const b = (await cjk.cache.stats()).bytes;
    expect(a).toBeGreaterThanOrEqual(10_000);
    expect(a).toBeLessThan(10_200);
    expect(b).toBeGreaterThanOrEqual(30_000);
    expect(b).toBeLessThan(30_200);
  });

  it("keeps nothing with maxBytes 0 (QUARRY_CACHE_MAX_BYTES=0 turns it off)", async () => {
    const { cache } = lruOnFakeClock({ maxBytes: 0 });
    await cache.set("k", "v", 60);
    expect(await cache.get("k")).toBeNull();
    expect((await cache.stats()).entries).toBe(0);
  });

  it("takes its bounds from QUARRY_CACHE_MAX_BYTES and QUARRY_CACHE_MAX_ENTRY_BYTES at start-up", async () => {
    const { ports, close } = await buildPorts({ ...parseConfig({ QUARRY_CACHE_MAX_BYTES: "8KB", QUARRY_CACHE_MAX_ENTRY_BYTES: "2KB" }), dataDir: tempDir("quarry-contract-") }, nodeRuntime, new MemoryLogger());
    await ports.cache.set("big", "b".repeat(3_000), 60);
    expect(await ports.cache.get("big")).toBeNull();
    for (let i = 0; i < 20; i++) await ports.cache.set(`small:${i}`, "s".repeat(1_000), 60);
    expect((await ports.cache.stats()).bytes).toBeLessThanOrEqual(8 * 1024);
    expect(await ports.cache.get("small:19")).toBe("s".repeat(1_000));
    await close();
  });

  it("keeps at most maxEntries entries", async () => {
    const { cache } = lruOnFakeClock({ maxEntries: 5 });
    for (let i = 0; i < 20; i++) await cache.set(`e:${i}`, i, 60);
    expect((await cache.stats()).entries).toBe(5);
    expect(await cache.get("e:19")).toBe(19);
    expect(await cache.get("e:0")).toBeNull();
  });
});
