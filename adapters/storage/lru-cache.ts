/**
 * The response cache in process, bounded by entries and by bytes.
 *
 * Keys are kept as given (the LRU is a map, nothing rewrites them), so any caller key, `?` and
 * all, is its own entry; the SHA-256 slots of cache-key.ts are for stores that rewrite keys
 * (Redis through unstorage), and hashing each lookup's key here was a tenth of a cached scrape's
 * CPU on Bun (issue #33). Each entry
 * is kept as UTF-8 bytes of its JSON, outside the JS heap: the bytes counted against maxBytes
 * are then exactly the bytes kept (JS strings may take two bytes a character, objects more),
 * and long-lived entries do not sit between the short-lived garbage of page extraction in the
 * heap's pages, which kept the heap from giving those pages back (issue #19, bench/footprint).
 * An entry is its expiry time in 8 bytes, then the value's JSON: no key inside it (the map's key
 * is the caller's own), so the JSON text can be handed out as it is (`getJson`), unparsed.
 */
import lruCacheDriver from "unstorage/drivers/lru-cache";
import type { CachePort } from "../../core/ports.ts";

export interface CacheLimits {
  /** Entries kept at most. */
  maxEntries?: number;
  /** Bytes kept at most (the least recently used go first); 0 keeps nothing. */
  maxBytes?: number;
  /** A larger entry is not kept at all (so one huge page cannot flush the rest). */
  maxEntryBytes?: number;
}

/** The same defaults as the configuration's (QUARRY_CACHE_MAX_BYTES, QUARRY_CACHE_MAX_ENTRY_BYTES). */
export const CACHE_DEFAULTS = { maxEntries: 10_000, maxBytes: 32 * 1024 * 1024, maxEntryBytes: 2 * 1024 * 1024 };

/** The part of lru-cache's LRUCache this adapter uses (unstorage's driver hands it out). */
interface Lru {
  get(key: string): Uint8Array | undefined;
  set(key: string, value: Uint8Array): unknown;
  delete(key: string): boolean;
  size: number;
  calculatedSize: number;
}

/** An entry's bytes: its expiry (ms since the epoch, a float64), then the UTF-8 of the value's JSON. */
const EXP_BYTES = 8;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class LruCache implements CachePort {
  private readonly lru: Lru;
  private readonly off: boolean;
  private readonly maxEntryBytes: number;

  constructor(
    private readonly now: () => number,
    opts: CacheLimits = {},
  ) {
    this.off = opts.maxBytes === 0;
    const maxBytes = Math.max(1, opts.maxBytes ?? CACHE_DEFAULTS.maxBytes);
    this.maxEntryBytes = Math.min(maxBytes, opts.maxEntryBytes ?? CACHE_DEFAULTS.maxEntryBytes);
    const driver = lruCacheDriver({
      max: opts.maxEntries ?? CACHE_DEFAULTS.maxEntries,
      maxSize: maxBytes,
      maxEntrySize: this.maxEntryBytes,
      // The key plus the stored bytes.
      sizeCalculation: (value: unknown, key: string) => key.length + ((value as Uint8Array).byteLength ?? 0),
    });
    // The LRU itself, not unstorage's Storage over it: Storage would turn the bytes into a string.
    this.lru = driver.getInstance!() as unknown as Lru;
  }

  /** The value's JSON text, or null (missing or expired: an expired entry is dropped). */
  private text(key: string): string | null {
    const bytes = this.lru.get(key);
    if (!bytes) return null;
    if (new DataView(bytes.buffer, bytes.byteOffset, EXP_BYTES).getFloat64(0) <= this.now()) {
      this.lru.delete(key);
      return null;
    }
    return decoder.decode(bytes.subarray(EXP_BYTES));
  }

  async get<T>(key: string): Promise<T | null> {
    const json = this.text(key);
    return json === null ? null : (JSON.parse(json) as T);
  }

  /** The JSON text as kept: no parse (a cached scrape answer is sent on as it is, issue #33). */
  async getJson(key: string): Promise<string | null> {
    return this.text(key);
  }

  async set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    if (this.off) return;
    const json = JSON.stringify(value);
    // Nothing JSON can say (undefined): nothing kept, and no older value served in its place.
    if (json === undefined) {
      this.lru.delete(key);
      return;
    }
    const text = encoder.encode(json);
    const bytes = new Uint8Array(EXP_BYTES + text.byteLength);
    new DataView(bytes.buffer).setFloat64(0, this.now() + ttlSeconds * 1000);
    bytes.set(text, EXP_BYTES);
    // Too large to keep: also forget an older value under this key, so it is not served stale.
    if (bytes.byteLength + key.length > this.maxEntryBytes) this.lru.delete(key);
    else this.lru.set(key, bytes);
  }

  async stats() {
    return { entries: this.lru.size, bytes: this.lru.calculatedSize ?? 0 };
  }
}
