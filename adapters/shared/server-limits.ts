/**
 * Connection limits for the HTTP servers (issue #19: slow clients). They belong to the
 * process, not to the core, so they are read here. What each runtime can enforce:
 *
 * | limit                     | Node | Deno | Bun |
 * | header / request timeout  | yes  | no   | idle timeout only |
 * | total / per-address caps  | yes  | no   | no  |
 * | keep-alive idle / max     | yes  | no   | idle timeout only |
 */
import { ConfigError, type Env } from "../../core/config.ts";

export interface ServerLimits {
  /** Time allowed to send the request line and headers. */
  headerTimeoutMs: number;
  /** Time allowed to send the whole request, body included. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** Requests on one keep-alive connection before the server closes it; 0 = no limit. */
  keepAliveMaxRequests: number;
  /** Open connections in total; 0 = no cap. */
  maxConnections: number;
  /** Open connections from one client address; 0 = no cap. Trusted proxies are exempt. */
  maxConnectionsPerAddress: number;
}

function count(env: Env, name: string, fallback: number, { min = 0, max = 1_000_000 } = {}): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) {
    throw new ConfigError(name, `"${raw}" is not a whole number from ${min} to ${max}`);
  }
  return n;
}

export function parseServerLimits(env: Env): ServerLimits {
  const headerTimeout = count(env, "QUARRY_HEADER_TIMEOUT", 10, { min: 1, max: 3600 });
  const requestTimeout = count(env, "QUARRY_REQUEST_TIMEOUT", 30, { min: 1, max: 3600 });
  if (requestTimeout < headerTimeout) {
    throw new ConfigError("QUARRY_REQUEST_TIMEOUT", `${requestTimeout} s is shorter than QUARRY_HEADER_TIMEOUT (${headerTimeout} s)`);
  }
  return {
    headerTimeoutMs: headerTimeout * 1000,
    requestTimeoutMs: requestTimeout * 1000,
    // Longer than clients and load balancers keep idle connections (undici 4 s, typical LBs 60 s),
    // so the client closes first: a POST sent on a socket the server is closing cannot be retried.
    keepAliveTimeoutMs: count(env, "QUARRY_KEEP_ALIVE_TIMEOUT", 65, { min: 1, max: 3600 }) * 1000,
    keepAliveMaxRequests: count(env, "QUARRY_KEEP_ALIVE_MAX_REQUESTS", 1000),
    // Below the common open-file limit of 1024, leaving room for upstream fetches and storage;
    // one address gets a third of it, more than a busy client or a load test opens at once.
    maxConnections: count(env, "QUARRY_MAX_CONNECTIONS", 768),
    maxConnectionsPerAddress: count(env, "QUARRY_MAX_CONNECTIONS_PER_ADDRESS", 256),
  };
}
