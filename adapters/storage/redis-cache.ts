/** The response cache in Redis (unstorage's Redis driver), shared by every instance. */
import { createStorage, type Storage } from "unstorage";
import redisDriver from "unstorage/drivers/redis";
import type { Redis } from "ioredis";
import { StorageError } from "../../core/errors.ts";
import type { CachePort } from "../../core/ports.ts";

const BASE = "quarry:cache";

export class RedisCache implements CachePort {
  private readonly kv: Storage;

  constructor(
    url: string,
    private readonly redis: Redis,
  ) {
    this.kv = createStorage({ driver: redisDriver({ url, base: BASE, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 }) });
  }

  async get<T>(key: string): Promise<T | null> {
    try {
      return await this.kv.getItem<T>(key);
    } catch {
      return null; // a cache that cannot answer is a miss, not an error
    }
  }

  async set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    await this.kv.setItem(key, value as string, { ttl: ttlSeconds }).catch(() => {});
  }

  /** Entries by SCAN (bounded); size from MEMORY USAGE of a sample, scaled. */
  async stats(): Promise<{ entries: number; bytes: number }> {
    try {
      let cursor = "0";
      let entries = 0;
      const sample: string[] = [];
      let rounds = 0;
      do {
        const [next, keys] = await this.redis.scan(cursor, "MATCH", `${BASE}:*`, "COUNT", 1000);
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

  async close(): Promise<void> {
    await this.kv.dispose().catch(() => {});
  }
}
