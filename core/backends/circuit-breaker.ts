/**
 * Per-backend circuit breaker and success rate, fed by real traffic only (no synthetic
 * probes of scraped upstreams). Suspension follows the error class, as SearXNG does:
 * - rate_limited: exactly the upstream's Retry-After, else a minute, doubling;
 * - captcha / blocked: an hour, doubling up to a day (the upstream has flagged us);
 * - timeout / network / http: a few seconds, doubling, once `transientThreshold` of them come
 *   in a row (one stalled call in a heavy-tailed upstream is no outage; suspending on it would
 *   throw away the next requests' results for nothing);
 * - parse: counted against the success rate but never suspends (our parser, not their outage).
 * A success closes the breaker and resets the doubling.
 */
import type { BackendError, ErrorClass } from "./types.ts";

export interface BreakerPolicy {
  blockedMs: number;
  blockedMaxMs: number;
  rateLimitedMs: number;
  rateLimitedMaxMs: number;
  transientMs: number;
  transientMaxMs: number;
  /** Consecutive transient failures (timeout, network, http) before the first suspension. */
  transientThreshold: number;
  /** Upper bound on an honoured Retry-After, so a bogus header cannot disable a backend for weeks. */
  retryAfterMaxMs: number;
  /** Success rate covers calls in the last `windowMs`, at most the last `windowMaxCalls`. */
  windowMs: number;
  windowMaxCalls: number;
}

export const DEFAULT_BREAKER_POLICY: BreakerPolicy = {
  blockedMs: 60 * 60_000,
  blockedMaxMs: 24 * 60 * 60_000,
  rateLimitedMs: 60_000,
  rateLimitedMaxMs: 60 * 60_000,
  transientMs: 5_000,
  transientMaxMs: 5 * 60_000,
  transientThreshold: 3,
  retryAfterMaxMs: 24 * 60 * 60_000,
  windowMs: 5 * 60_000,
  windowMaxCalls: 100,
};

export interface Suspension {
  until: number;
  error: BackendError;
}

export interface CircuitBreaker {
  /** The current suspension of `id`, or null when calls may go through. */
  suspension(id: string, now: number): Suspension | null;
  recordSuccess(id: string, now: number): void;
  recordFailure(id: string, error: BackendError, now: number): void;
  /** A call made outside the runner (a video's player or captions): counted in the window, never suspends. */
  recordOutcome(id: string, ok: boolean, now: number): void;
  /** Share of successful calls in the window, and how many calls that is. */
  successRate(id: string, now: number): { rate: number; calls: number };
}

interface BackendState {
  suspendedUntil: number;
  /** Suspending failures since the last success: the exponent of the back-off. */
  strikes: number;
  lastError: BackendError | null;
  calls: { at: number; ok: boolean }[];
}

function backoff(base: number, max: number, strikes: number): number {
  return Math.min(max, base * 2 ** Math.min(strikes - 1, 30));
}

/** How long a failure of class `cls` suspends the backend; 0 = not at all. */
export function suspensionMs(policy: BreakerPolicy, error: BackendError, strikes: number): number {
  const retryAfter =
    error.retryAfterSeconds === undefined ? undefined : Math.min(error.retryAfterSeconds * 1000, policy.retryAfterMaxMs);
  const transient = () =>
    strikes < policy.transientThreshold ? 0 : backoff(policy.transientMs, policy.transientMaxMs, strikes - policy.transientThreshold + 1);
  const byClass: Record<ErrorClass, () => number> = {
    parse: () => 0,
    rate_limited: () => retryAfter ?? backoff(policy.rateLimitedMs, policy.rateLimitedMaxMs, strikes),
    captcha: () => backoff(policy.blockedMs, policy.blockedMaxMs, strikes),
    blocked: () => backoff(policy.blockedMs, policy.blockedMaxMs, strikes),
    timeout: transient,
    network: transient,
    // An overloaded upstream's 503 + Retry-After is honoured at once, and when it asks for longer.
    http: () => Math.max(retryAfter ?? 0, transient()),
  };
  return byClass[error.class]();
}

export function createCircuitBreaker(overrides: Partial<BreakerPolicy> = {}): CircuitBreaker {
  const policy: BreakerPolicy = { ...DEFAULT_BREAKER_POLICY, ...overrides };
  const states = new Map<string, BackendState>();

  const stateOf = (id: string): BackendState => {
    let state = states.get(id);
    if (!state) {
      state = { suspendedUntil: 0, strikes: 0, lastError: null, calls: [] };
      states.set(id, state);
    }
    return state;
  };

  const prune = (state: BackendState, now: number): void => {
    const oldest = now - policy.windowMs;
    let drop = 0;
    while (drop < state.calls.length && state.calls[drop]!.at < oldest) drop++;
    drop = Math.max(drop, state.calls.length - policy.windowMaxCalls);
    if (drop > 0) state.calls.splice(0, drop);
  };

  const record = (state: BackendState, ok: boolean, now: number): void => {
    state.calls.push({ at: now, ok });
    prune(state, now);
  };

  return {
    suspension(id, now) {
      const state = states.get(id);
      if (!state || !state.lastError || state.suspendedUntil <= now) return null;
      return { until: state.suspendedUntil, error: state.lastError };
    },

    recordSuccess(id, now) {
      const state = stateOf(id);
      state.strikes = 0;
      state.suspendedUntil = 0;
      state.lastError = null;
      record(state, true, now);
    },

    recordFailure(id, error, now) {
      const state = stateOf(id);
      record(state, false, now);
      if (error.class === "parse") return;
      state.strikes += 1;
      state.lastError = error;
      state.suspendedUntil = now + suspensionMs(policy, error, state.strikes);
    },

    recordOutcome(id, ok, now) {
      record(stateOf(id), ok, now);
    },

    successRate(id, now) {
      const state = states.get(id);
      if (!state) return { rate: 1, calls: 0 };
      prune(state, now);
      const calls = state.calls.length;
      if (calls === 0) return { rate: 1, calls: 0 };
      return { rate: state.calls.filter((c) => c.ok).length / calls, calls };
    },
  };
}
