/**
 * The response cache in process: unstorage's LRU driver, bounded by entries and by bytes.
 * Keys are hashed (cache-key.ts), so any caller key, `?` and all, is its own entry. unstorage
 * hands the driver the entry as a JSON string, so the bytes counted are the bytes kept.
 */
import { createStorage, type Storage } from "unstorage";
import lruCacheDriver from "unstorage/drivers/lru-cache";
import type { CachePort } from "../../core/ports.ts";
import { cacheSlot, entryFor, stringBytes } from "./cache-key.ts";

export interface CacheLimits {
  /** Entries kept at most. */
  maxEntries?: number;
  /** Bytes of stored JSON kept at most (the least recently used go first). */
  maxBytes?: number;
  /** A larger entry is not kept at all (so one huge page cannot flush the rest). */
  maxEntryBytes?: number;
}

export const CACHE_DEFAULTS = { maxEntries: 10_000, maxBytes: 64 * 1024 * 1024, maxEntryBytes: 4 * 1024 * 1024 };

export class LruCache implements CachePort {
  private readonly kv: Storage;
  private readonly lru: { size: number; calculatedSize: number };

  constructor(
    private readonly now: () => number,
    opts: CacheLimits = {},
  ) {
    const maxBytes = opts.maxBytes ?? CACHE_DEFAULTS.maxBytes;
    const driver = lruCacheDriver({
      max: opts.maxEntries ?? CACHE_DEFAULTS.maxEntries,
      maxSize: maxBytes,
      maxEntrySize: Math.min(maxBytes, opts.maxEntryBytes ?? CACHE_DEFAULTS.maxEntryBytes),
      // The slot (64 hex characters) plus the stored JSON string.
      sizeCalculation: (value: unknown, key: string) =>
        key.length + (typeof value === "string" ? stringBytes(value) : stringBytes(JSON.stringify(value ?? null))),
    });
    this.kv = createStorage({ driver });
    this.lru = driver.getInstance!() as unknown as { size: number; calculatedSize: number };
  }

  async get<T>(key: string): Promise<T | null> {
    const slot = cacheSlot(key);
    const e = entryFor(key, await this.kv.getItem(slot));
    if (!e) return null;
    if ((e.exp ?? 0) <= this.now()) {
      await this.kv.removeItem(slot);
      return null;
    }
    return e.v as T;
  }

  async set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    await this.kv.setItem(cacheSlot(key), { k: key, v: value, exp: this.now() + ttlSeconds * 1000 });
  }

  async stats() {
    return { entries: this.lru.size, bytes: this.lru.calculatedSize ?? 0 };
  }
}
