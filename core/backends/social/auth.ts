/**
 * Token exchanges for platforms that sign in before searching (Reddit OAuth client
 * credentials, Bluesky createSession). Each exchange is a pure request builder and parser,
 * like a backend; `authenticate` runs one through the injected fetch and caches the token by
 * the Clock port. `withPlatformAuth` wraps the runner's fetch so that a search request to such
 * a platform carries the cached token: backends stay pure and the runner stays unchanged.
 * Failed sign-ins are cached briefly too, so a wrong password is not retried on every request
 * (Bluesky limits createSession to 30 per 5 minutes).
 */
import type { Clock, FetchPort } from "../../ports.ts";
import type { BackendRegistry } from "../registry.ts";
import type { BackendConfig, BackendError, UpstreamResponse } from "../types.ts";

export type TokenOutcome =
  | { ok: true; token: string; /** Absolute expiry (ms since epoch) when the token says so. */ expiresAtMs?: number; expiresInSeconds?: number }
  | { ok: false; error: BackendError };

export interface TokenExchange {
  /** Backend id this exchange signs in for. */
  id: string;
  /** Upstream paths (below the base URL) whose requests need the token. */
  paths: readonly string[];
  /** True when the configured credentials call for an exchange (else the backend signs its own requests). */
  applies(cfg: BackendConfig): boolean;
  buildTokenRequest(cfg: BackendConfig): Request;
  parseTokenResponse(res: UpstreamResponse): TokenOutcome;
  /** True when the platform's answer says the token is no good (default: HTTP 401). Gets a clone. */
  rejectsToken?(res: Response): Promise<boolean>;
}

interface Entry {
  outcome: TokenOutcome;
  until: number;
}

export interface TokenCache {
  get(key: string, now: number): TokenOutcome | null;
  set(key: string, outcome: TokenOutcome, now: number): void;
  invalidate(key: string): void;
  /** Exchanges in flight, so concurrent requests share one sign-in. */
  pending: Map<string, Promise<TokenOutcome>>;
}

const DEFAULT_LIFETIME_MS = 10 * 60_000;
const EARLY_MS = 60_000;
const FAILURE_MS = 60_000;

export function createTokenCache(): TokenCache {
  const entries = new Map<string, Entry>();
  return {
    get(key, now) {
      const entry = entries.get(key);
      if (!entry) return null;
      if (entry.until > now) return entry.outcome;
      entries.delete(key);
      return null;
    },
    set(key, outcome, now) {
      let until: number;
      if (outcome.ok) {
        const expiry = outcome.expiresAtMs ?? (outcome.expiresInSeconds !== undefined ? now + outcome.expiresInSeconds * 1000 : now + DEFAULT_LIFETIME_MS);
        until = Math.max(now, expiry - EARLY_MS);
      } else if (outcome.error.class === "rate_limited" || outcome.error.class === "blocked") {
        until = now + (outcome.error.retryAfterSeconds !== undefined ? outcome.error.retryAfterSeconds * 1000 : FAILURE_MS);
      } else {
        return; // transient trouble: try again next time
      }
      entries.set(key, { outcome, until });
    },
    invalidate: (key) => void entries.delete(key),
    pending: new Map(),
  };
}

function cacheKey(exchange: TokenExchange, cfg: BackendConfig): string {
  return [exchange.id, cfg.baseUrl, cfg.key ?? "", cfg.token ?? ""].join("\n");
}

/**
 * A token for `cfg`: from the cache, or by one exchange through `fetch`. Network failures
 * reject like fetch does; everything else is a value.
 */
export async function authenticate(
  exchange: TokenExchange,
  fetch: FetchPort,
  cfg: BackendConfig,
  cache: TokenCache,
  clock: Clock,
  signal?: AbortSignal,
): Promise<TokenOutcome> {
  const key = cacheKey(exchange, cfg);
  const cached = cache.get(key, clock.now());
  if (cached) return cached;
  const inFlight = cache.pending.get(key);
  if (inFlight) return inFlight;
  const attempt = (async () => {
    const res = await fetch(exchange.buildTokenRequest(cfg), signal ? { signal } : undefined);
    const outcome = exchange.parseTokenResponse({ status: res.status, headers: res.headers, body: await res.text() });
    cache.set(key, outcome, clock.now());
    return outcome;
  })();
  cache.pending.set(key, attempt);
  try {
    return await attempt;
  } finally {
    cache.pending.delete(key);
  }
}

/** Header marking an answer made up by `withPlatformAuth` for a failed sign-in. */
export const AUTH_FAILURE_HEADER = "x-quarry-auth-failure";

/** The failed sign-in `withPlatformAuth` reported in place of an upstream answer, if this is one. */
export function signInFailure(res: UpstreamResponse, what: string): BackendError | null {
  const cls = res.headers.get(AUTH_FAILURE_HEADER);
  if (!cls) return null;
  const retry = Number(res.headers.get("retry-after"));
  const errorClass: BackendError["class"] = cls === "rate_limited" ? "rate_limited" : cls === "blocked" ? "blocked" : "http";
  return {
    class: errorClass,
    message: `${what} sign-in failed: ${res.body}`,
    ...(Number.isFinite(retry) && res.headers.has("retry-after") ? { retryAfterSeconds: retry } : {}),
  };
}

function failureResponse(error: BackendError): Response {
  const status = error.class === "rate_limited" ? 429 : error.class === "blocked" ? 401 : 502;
  const headers: Record<string, string> = { [AUTH_FAILURE_HEADER]: error.class, "content-type": "text/plain" };
  if (error.retryAfterSeconds !== undefined) headers["retry-after"] = String(error.retryAfterSeconds);
  return new Response(error.message, { status, headers });
}

/**
 * Wraps `fetch` so requests to a signing-in platform's search paths carry its token. A request
 * that already has an Authorization header (credentials that are a token already) passes as is.
 * A rejected token (401, or what the exchange says) is dropped, so the next request signs in again.
 */
export function withPlatformAuth(
  fetch: FetchPort,
  clock: Clock,
  registry: BackendRegistry,
  exchanges: readonly TokenExchange[],
  cache: TokenCache = createTokenCache(),
): FetchPort {
  return async (input, init) => {
    const request = new Request(input, init);
    if (request.headers.has("authorization")) return fetch(request);
    for (const exchange of exchanges) {
      const entry = registry.get(exchange.id);
      if (!entry?.enabled || !exchange.applies(entry.config)) continue;
      const base = new URL(entry.config.baseUrl);
      const prefix = base.origin + base.pathname.replace(/\/+$/, "");
      const url = new URL(request.url);
      if (url.origin !== base.origin || !exchange.paths.some((p) => url.pathname === new URL(prefix + p).pathname)) continue;

      const outcome = await authenticate(exchange, fetch, entry.config, cache, clock, request.signal);
      if (!outcome.ok) return failureResponse(outcome.error);
      const signed = new Request(request, { headers: new Headers(request.headers) });
      signed.headers.set("authorization", `Bearer ${outcome.token}`);
      const res = await fetch(signed);
      const rejected = exchange.rejectsToken ? await exchange.rejectsToken(res.clone()) : res.status === 401;
      if (rejected) cache.invalidate(cacheKey(exchange, entry.config));
      return res;
    }
    return fetch(request);
  };
}
