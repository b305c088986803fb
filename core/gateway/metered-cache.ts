/** The response cache, counting hits and misses by kind (the key's prefix: `search`, `scrape`, …). */
import type { CachePort, Metrics } from "../ports.ts";

export function meteredCache(cache: CachePort, metrics: Metrics): CachePort {
  return {
    async get<T>(key: string) {
      const value = await cache.get<T>(key);
      metrics.cache(key.split(":", 1)[0] || "other", value !== null);
      return value;
    },
    set: (key, value, ttl) => cache.set(key, value, ttl),
    stats: () => cache.stats(),
  };
}
