/** Connects to Redis (QUARRY_REDIS_URL) so that an outage fails fast instead of queueing. */
import { Redis } from "ioredis";
import type { Logger } from "../../core/ports.ts";

export async function openRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = new Redis(url, {
    // No offline queue and one retry: while Redis is down, requests get a 503 at once, not a hang.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    // Keep reconnecting (capped backoff): service resumes by itself when Redis is back.
    retryStrategy: (times) => Math.min(times * 200, 2_000),
    lazyConnect: true,
  });
  let lastError = "";
  redis.on("error", (err) => {
    if (err.message !== lastError) logger.warn({ err: err.message }, "Redis connection problem; retrying");
    lastError = err.message;
  });
  redis.on("ready", () => {
    if (lastError) logger.info({}, "Redis connection restored");
    lastError = "";
  });
  // Start even if Redis is down (health says so and requests get 503 until it is back).
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([redis.connect().catch(() => {}), new Promise((r) => (timer = setTimeout(r, 3_000)))]);
  clearTimeout(timer);
  return redis;
}
