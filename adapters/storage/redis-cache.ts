/**
 * The response cache in Redis, shared by every instance. It speaks to Redis on the service's
 * own connection (no offline queue: while Redis is down a get is a miss at once, not a hang).
 * Keys are hashed (cache-key.ts) so that no caller key collides with another, and the entry
 * keeps its key so a get answers only the exact key. Redis expires entries itself (EX), and
 * its maxmemory policy bounds the total.
 */
import type { Redis } from "ioredis";
import { StorageError } from "../../core/errors.ts";
import type { CachePort } from "../../core/ports.ts";
import { cacheSlot, entryFor } from "./cache-key.ts";
import { CACHE_DEFAULTS } from "./lru-cache.ts";
import { batched } from "./coalesce.ts";

const BASE = "quarry:cache";

export class RedisCache implements CachePort {
  private readonly base: string;
  private readonly maxEntryBytes: number;

  /** `opts.base` keeps tests apart from each other and from a running service. */
  constructor(
    private readonly redis: Redis,
    opts: { base?: string; maxEntryBytes?: number } = {},
  ) {
    this.base = opts.base ?? BASE;
    this.maxEntryBytes = opts.maxEntryBytes ?? CACHE_DEFAULTS.maxEntryBytes;
  }

  private at(key: string): string {
    return `${this.base}:${cacheSlot(key)}`;
  }

  async get<T>(key: string): Promise<T | null> {
    try {
      const raw = await this.read(this.at(key));
      // Each caller parses its own copy: callers of one turn share the read, never an object.
      return raw === null ? null : ((entryFor(key, JSON.parse(raw))?.v as T | undefined) ?? null);
    } catch {
      return null; // a cache that cannot answer (or an unreadable entry) is a miss, not an error
    }
  }

  /**
   * Entries asked for in one turn of the event loop, each read once (coalesce.ts: the read starts
   * after every caller of the turn asked): fifty requests for one cached answer in a turn were
   * fifty GETs of the same bytes (issue #33).
   */
  private readonly read = batched<string, string | null>(
    async (slots) => {
      const unique = [...new Set(slots)];
      const values = await Promise.all(unique.map((k) => this.redis.get(k)));
      const bySlot = new Map(unique.map((k, i) => [k, values[i] ?? null]));
      return slots.map((k) => bySlot.get(k) ?? null);
    },
    (slot) => this.redis.get(slot),
    () => true,
  );

  async set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    const json = JSON.stringify({ k: key, v: value });
    // Same rule as in process: an entry too large to be worth keeping is not kept.
    if (json.length > this.maxEntryBytes) return;
    // Whole seconds for EX; a TTL under one second still lives one second rather than forever.
    await this.redis.set(this.at(key), json, "EX", Math.max(1, Math.ceil(ttlSeconds))).catch(() => {});
  }

  /** Entries by SCAN (bounded); size from MEMORY USAGE of a sample, scaled. */
  async stats(): Promise<{ entries: number; bytes: number }> {
    try {
      let cursor = "0";
      let entries = 0;
      const sample: string[] = [];
      let rounds = 0;
      do {
        const [next, keys] = await this.redis.scan(cursor, "MATCH", `${this.base}:*`, "COUNT", 1000);
        cursor = next;
        entries += keys.length;
        if (sample.length < 100) sample.push(...keys.slice(0, 100 - sample.length));
      } while (cursor !== "0" && ++rounds < 100);
      const sizes = await Promise.all(sample.map((k) => this.redis.memory("USAGE", k).then((n) => Number(n ?? 0))));
      const avg = sizes.length ? sizes.reduce((a, b) => a + b, 0) / sizes.length : 0;
      return { entries, bytes: Math.round(avg * entries) };
    } catch (err) {
      throw new StorageError(`Redis: ${(err as Error).message}`, { cause: err });
    }
  }

  /** The connection belongs to whoever opened it (bootstrap closes it). */
  async close(): Promise<void> {}
}
