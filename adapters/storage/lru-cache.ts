/** The response cache in process: unstorage's LRU driver, bounded by entries and bytes. */
import { createStorage, type Storage } from "unstorage";
import lruCacheDriver from "unstorage/drivers/lru-cache";
import type { CachePort } from "../../core/ports.ts";

interface Entry {
  v: unknown;
  exp: number;
}

export class LruCache implements CachePort {
  private readonly kv: Storage;
  private readonly lru: { size: number; calculatedSize: number };

  constructor(
    private readonly now: () => number,
    opts: { maxEntries?: number; maxBytes?: number } = {},
  ) {
    const driver = lruCacheDriver({
      max: opts.maxEntries ?? 10_000,
      maxSize: opts.maxBytes ?? 64 * 1024 * 1024,
      sizeCalculation: (value: unknown) => Math.max(1, JSON.stringify(value ?? null).length),
    });
    this.kv = createStorage({ driver });
    this.lru = driver.getInstance!() as unknown as { size: number; calculatedSize: number };
  }

  async get<T>(key: string): Promise<T | null> {
    const e = await this.kv.getItem<Entry>(key);
    if (!e) return null;
    if (e.exp <= this.now()) {
      await this.kv.removeItem(key);
      return null;
    }
    return e.v as T;
  }

  async set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    await this.kv.setItem(key, { v: value, exp: this.now() + ttlSeconds * 1000 });
  }

  async stats() {
    return { entries: this.lru.size, bytes: this.lru.calculatedSize ?? 0 };
  }
}
