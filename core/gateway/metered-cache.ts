/** The response cache, counting hits and misses by kind (the key's prefix: `search`, `scrape`, …). */
import type { CachePort, Metrics } from "../ports.ts";

export function meteredCache(cache: CachePort, metrics: Metrics): CachePort {
  const kind = (key: string) => key.split(":", 1)[0] || "other";
  const port: CachePort = {
    async get<T>(key: string) {
      const value = await cache.get<T>(key);
      metrics.cache(kind(key), value !== null);
      return value;
    },
    set: (key, value, ttl) => cache.set(key, value, ttl),
    stats: () => cache.stats(),
  };
  // Only where the cache has it: callers fall back to `get` without it.
  if (cache.getJson) {
    const getJson = cache.getJson.bind(cache);
    port.getJson = async (key) => {
      const json = await getJson(key);
      metrics.cache(kind(key), json !== null);
      return json;
    };
  }
  return port;
}
