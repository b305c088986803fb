/** Connects to Redis (QUARRY_REDIS_URL) so that an outage fails fast instead of queueing. */
import { Redis } from "ioredis";
import { ConfigError } from "../../core/config.ts";
import type { Logger } from "../../core/ports.ts";

/**
 * Answers that no wait will change: a wrong password, a password missing, a database number the
 * server does not have. ioredis retries the first two forever, and on the last it goes on with
 * database 0 (another application's, perhaps) after one error event; so start-up stops instead.
 */
const MISCONFIGURED = /WRONGPASS|NOAUTH|invalid password|invalid username-password|DB index is out of range/i;

export async function openRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = new Redis(url, {
    // No offline queue and one retry: while Redis is down, requests get a 503 at once, not a hang.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    // Keep reconnecting (capped backoff): service resumes by itself when Redis is back.
    retryStrategy: (times) => Math.min(times * 200, 2_000),
    lazyConnect: true,
    // The commands of one turn of the event loop leave in one write (issue #33: a write per
    // admission, commit and usage read was most of an instance's CPU). Each command keeps its
    // own answer and its own error; only the round trip is shared.
    enableAutoPipelining: true,
  });
  let lastError = "";
  let misconfigured: string | null = null;
  let starting = true;
  redis.on("error", (err) => {
    if (starting && MISCONFIGURED.test(err.message)) return void (misconfigured ??= err.message);
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
  starting = false;
  if (misconfigured) {
    redis.disconnect();
    throw new ConfigError("QUARRY_REDIS_URL", `Redis refused it: ${misconfigured}`);
  }
  return redis;
}
