/**
 * Name lookups for the browser's egress proxy, shared across its connections. Behind a proxy
 * Chromium resolves nothing itself, so its own host cache is out of play: without this, every
 * connection of a page (a script, a font, each image) asked the system resolver again, and a page
 * naming one CDN thirty times made thirty lookups at once. getaddrinfo runs in libuv's thread
 * pool (four threads by default), so such a burst queued every later lookup of every render behind
 * it, and a resolver that drops part of a burst (seen here: one query in six, each retried after
 * glibc's 5 s timeout) held whole pages until their deadline.
 *
 * Lookups of the same name in flight are shared, answers kept for `ttlMs`, failures for
 * `failTtlMs`. The proxy still checks every answer and connects only to an address it checked,
 * so a kept answer cannot let a changed (rebound) name through: it is the same checked address.
 */
import type { Resolver } from "../fetch/types.ts";

export interface DnsMemoOptions {
  /** How long an answer is reused, ms. */
  ttlMs?: number;
  /** How long a failed lookup is reused, ms. */
  failTtlMs?: number;
  /** Most names kept; the oldest goes first. */
  max?: number;
  now?: () => number;
}

export function memoResolver(resolver: Resolver, options: DnsMemoOptions = {}): Resolver {
  const { ttlMs = 30_000, failTtlMs = 5_000, max = 1_000, now = Date.now } = options;
  const kept = new Map<string, { until: number; answer: Promise<string[]> }>();
  return (hostname) => {
    const name = hostname.toLowerCase();
    const hit = kept.get(name);
    if (hit && hit.until > now()) return hit.answer;
    kept.delete(name);
    const answer = resolver(name);
    // In flight: shared until it settles, then kept for as long as its outcome deserves.
    const entry = { until: Number.POSITIVE_INFINITY, answer };
    kept.set(name, entry);
    if (kept.size > max) kept.delete(kept.keys().next().value!);
    answer.then(
      () => (entry.until = now() + ttlMs),
      () => (entry.until = now() + failTtlMs),
    );
    return answer;
  };
}
