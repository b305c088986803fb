/**
 * Runs the selected backends concurrently under one deadline per request. Each backend also
 * has its own timeout; whichever comes first aborts its fetch (AbortSignal) and reports it as
 * `timeout`, so the answer is back by the deadline with whatever the others returned.
 * Outcomes feed the circuit breaker and the success rate (circuit-breaker.ts).
 */
import type { Clock, FetchPort } from "../ports.ts";
import { createCircuitBreaker, type BreakerPolicy, type CircuitBreaker } from "./circuit-breaker.ts";
import type { BackendRegistry, RegistryEntry } from "./registry.ts";
import type { BackendError, BackendKind, BackendQuery, ParseOutcome, RawResult } from "./types.ts";

/** Timer scheduling, injectable so tests drive time with a fake clock. */
export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const GLOBAL_TIMERS: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface RunnerOptions {
  registry: BackendRegistry;
  fetch: FetchPort;
  clock: Clock;
  timers?: Timers;
  /** Longest any single backend may take, in ms (default 5000). */
  timeoutMs?: number;
  /** Deadline used when a run gives none, in ms from its start (default 8000). */
  deadlineMs?: number;
  breaker?: Partial<BreakerPolicy>;
  /** Told of every call's outcome (`ok`, an error class or `timeout`) and its time, for metrics. */
  onCall?: (backend: string, outcome: string, seconds: number) => void;
}

export interface RunRequest {
  query: BackendQuery;
  /** Backends to ask; default every enabled backend of `kind`. Unknown ids are ignored. */
  backends?: readonly string[];
  /** Which backends are reported (default `web`). */
  kind?: BackendKind;
  /** Backends not to ask this time, each with the reason `meta.backends` shows (e.g. no news search). */
  skip?: Readonly<Record<string, string>>;
  /** The request's one deadline, in clock milliseconds. */
  deadline?: number;
}

export type RunStatus = "ok" | "error" | "timeout" | "skipped" | "disabled";

/** One backend's part in a run, as `meta.backends` shows it (api.md §6). */
export interface BackendRunStatus {
  status: RunStatus;
  results: number;
  latency_ms: number;
  error?: string;
  /** ISO 8601 UTC: when this failed backend will be asked again (its circuit breaker's suspension). */
  retry_at?: string;
}

export interface RunOutcome<T = RawResult> {
  backends: Record<string, BackendRunStatus>;
  /** Results of the backends that answered `ok`, in registry order. */
  results: Record<string, T[]>;
}

/** `unknown`: no call in the window, so nothing to judge by (a fresh start, an idle backend). */
export type HealthStatus = "ok" | "unknown" | "suspended" | "failing" | "disabled";

export interface BackendHealth {
  status: HealthStatus;
  /** Share of the window's calls that succeeded; 0 when there were none (see `calls`). */
  success_rate: number;
  /** Calls in the success-rate window. */
  calls: number;
}

export interface BackendRunner {
  /** `T` is the item type of the backends of `request.kind` (RawResult for web). */
  run<T = RawResult>(request: RunRequest): Promise<RunOutcome<T>>;
  /** From recent real traffic and breaker state only; never calls an upstream. */
  health(kind?: BackendKind): Record<string, BackendHealth>;
  /**
   * Counts a call an operation made to the backend's upstream itself (a video's player and
   * captions) toward its health, so /health moves when they fail; it never suspends the backend.
   */
  observe?(id: string, ok: boolean): void;
}

type Settled =
  | { kind: "parsed"; outcome: ParseOutcome<unknown> }
  | { kind: "failed"; error: BackendError }
  | { kind: "timeout"; byDeadline: boolean };


function errorText(error: BackendError): string {
  return `${error.class}: ${error.message}`;
}

/** `duckduckgo (timeout: no answer within 4000 ms); wikipedia (ok, 5 results)`: for error messages. */
/**
 * Whole seconds until a request that every backend failed could be answered, when each failed
 * backend is suspended (a 429's Retry-After, a 5xx's back-off): the Retry-After of the 502/504,
 * so a caller waits as long as it must and no longer. Undefined when one could be asked at once.
 */
export function retryAfterOf(statuses: Record<string, BackendRunStatus>, now: number): number | undefined {
  const failed = Object.values(statuses).filter((s) => s.status === "error" || s.status === "timeout" || s.retry_at);
  if (failed.length === 0 || failed.some((s) => !s.retry_at) || Object.values(statuses).some((s) => s.status === "ok")) return undefined;
  const soonest = Math.min(...failed.map((s) => Date.parse(s.retry_at!)));
  return Math.max(1, Math.ceil((soonest - now) / 1000));
}

/** The ApiError extras of a failed run: each backend's status, and a Retry-After when one applies. */
export function failedRunExtra(statuses: Record<string, BackendRunStatus>, now: number) {
  const retryAfter = retryAfterOf(statuses, now);
  return { fields: { backends: statuses }, ...(retryAfter === undefined ? {} : { retryAfter, headers: { "Retry-After": String(retryAfter) } }) };
}

export function describeStatuses(statuses: Record<string, BackendRunStatus>): string {
  return Object.entries(statuses)
    .map(([id, s]) => `${id} (${s.error ?? (s.status === "ok" ? `ok, ${s.results} results` : s.status)})`)
    .join("; ");
}

/**
 * What a failed fetch says, with its cause: Node's and Deno's fetch throw a bare "fetch failed"
 * whose cause holds the DNS, connection or TLS error that an operator needs to see.
 */
export function networkErrorText(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (!(e instanceof Error) && typeof e !== "object") {
      parts.push(String(e));
      break;
    }
    const { message, code } = e as { message?: unknown; code?: unknown };
    const text = typeof message === "string" && message ? message : typeof code === "string" ? code : "";
    if (text && !parts.some((p) => p.includes(text))) parts.push(typeof code === "string" && !text.includes(code) ? `${code}: ${text}` : text);
  }
  return parts.join(": ") || "network error";
}

export function createRunner(options: RunnerOptions): BackendRunner {
  const { registry, fetch, clock } = options;
  const timers = options.timers ?? GLOBAL_TIMERS;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const defaultDeadlineMs = options.deadlineMs ?? 8_000;
  const breaker: CircuitBreaker = createCircuitBreaker(options.breaker);

  async function call(entry: RegistryEntry & { enabled: true }, query: BackendQuery, signal: AbortSignal): Promise<Settled> {
    let response: Response;
    try {
      response = await fetch(entry.backend.buildRequest(query, entry.config), { signal });
    } catch (err) {
      return { kind: "failed", error: { class: "network", message: networkErrorText(err) } };
    }
    let body: string;
    try {
      body = await response.text();
    } catch (err) {
      return { kind: "failed", error: { class: "network", message: `reading body: ${networkErrorText(err)}` } };
    }
    if (signal.aborted) return { kind: "timeout", byDeadline: false }; // the timer already answered
    try {
      return { kind: "parsed", outcome: entry.backend.parseResponse({ status: response.status, headers: response.headers, body }, query) };
    } catch (err) {
      // Parsers never throw by contract; if one does, contain the bug to this backend.
      return { kind: "failed", error: { class: "parse", message: `parser bug: ${err instanceof Error ? err.message : String(err)}` } };
    }
  }

  /** Races the call against min(per-backend timeout, time left before the deadline). */
  async function runOne(entry: RegistryEntry & { enabled: true }, query: BackendQuery, deadline: number): Promise<Settled> {
    const left = deadline - clock.now();
    if (left <= 0) return { kind: "timeout", byDeadline: true };
    const byDeadline = left < timeoutMs;
    const controller = new AbortController();
    let handle: unknown;
    const timedOut = new Promise<Settled>((resolve) => {
      handle = timers.set(() => {
        resolve({ kind: "timeout", byDeadline });
        controller.abort();
      }, Math.min(left, timeoutMs));
    });
    const settled = await Promise.race([call(entry, query, controller.signal), timedOut]);
    timers.clear(handle);
    return settled;
  }

  function account(id: string, settled: Settled, startedAt: number): { status: BackendRunStatus; results?: unknown[] } {
    const now = clock.now();
    const retryAt = () => {
      const suspended = breaker.suspension(id, now);
      return suspended ? { retry_at: new Date(suspended.until).toISOString() } : {};
    };
    const latency_ms = Math.max(0, Math.round(now - startedAt));
    const error = settled.kind === "failed" ? settled.error : settled.kind === "parsed" && !settled.outcome.ok ? settled.outcome.error : null;
    options.onCall?.(id, settled.kind === "timeout" ? "timeout" : error ? error.class : "ok", latency_ms / 1000);
    if (settled.kind === "timeout") {
      // A backend cut short by the request's own deadline is not the backend's fault.
      if (!settled.byDeadline) breaker.recordFailure(id, { class: "timeout", message: "timed out" }, now);
      const error = settled.byDeadline ? "timeout: request deadline reached" : `timeout: no answer within ${timeoutMs} ms`;
      return { status: { status: "timeout", results: 0, latency_ms, error, ...retryAt() } };
    }
    if (error) {
      breaker.recordFailure(id, error, now);
      return { status: { status: "error", results: 0, latency_ms, error: errorText(error), ...retryAt() } };
    }
    const results = settled.kind === "parsed" && settled.outcome.ok ? settled.outcome.results : [];
    breaker.recordSuccess(id, now);
    return { status: { status: "ok", results: results.length, latency_ms }, results };
  }

  return {
    async run<T = RawResult>(request: RunRequest): Promise<RunOutcome<T>> {
      const startedAt = clock.now();
      const deadline = request.deadline ?? startedAt + defaultDeadlineMs;
      const wanted = request.backends ? new Set(request.backends) : null;
      const backends: Record<string, BackendRunStatus> = {};
      const pending: Promise<{ id: string; result?: unknown[] }>[] = [];

      for (const id of registry.ids(request.kind ?? "web")) {
        const entry = registry.get(id)!;
        if (!entry.enabled) {
          backends[id] = { status: "disabled", results: 0, latency_ms: 0, error: entry.reason };
          continue;
        }
        if (wanted && !wanted.has(id)) {
          backends[id] = { status: "skipped", results: 0, latency_ms: 0, error: "not requested" };
          continue;
        }
        if (request.skip?.[id]) {
          backends[id] = { status: "skipped", results: 0, latency_ms: 0, error: request.skip[id] };
          continue;
        }
        const suspended = breaker.suspension(id, startedAt);
        if (suspended) {
          const until = new Date(suspended.until).toISOString();
          backends[id] = { status: "skipped", results: 0, latency_ms: 0, error: `suspended until ${until} after ${errorText(suspended.error)}`, retry_at: until };
          continue;
        }
        backends[id] = { status: "timeout", results: 0, latency_ms: 0 }; // placeholder keeps registry order
        pending.push(
          runOne(entry, request.query, deadline).then((settled) => {
            const { status, results } = account(id, settled, startedAt);
            backends[id] = status;
            return { id, result: results };
          }),
        );
      }

      const results: Record<string, T[]> = {};
      for (const { id, result } of await Promise.all(pending)) if (result) results[id] = result as T[];
      return { backends, results };
    },

    observe(id, ok) {
      breaker.recordOutcome(id, ok, clock.now());
    },

    health(kind = "web") {
      const now = clock.now();
      const report: Record<string, BackendHealth> = {};
      for (const id of registry.ids(kind)) {
        if (!registry.get(id)!.enabled) {
          report[id] = { status: "disabled", success_rate: 0, calls: 0 };
          continue;
        }
        // Every status follows from real outcomes in the window: no traffic is no evidence.
        const { rate, calls } = breaker.successRate(id, now);
        const status: HealthStatus = breaker.suspension(id, now) ? "suspended" : calls === 0 ? "unknown" : rate < 0.5 ? "failing" : "ok";
        report[id] = { status, success_rate: calls ? Math.round(rate * 1000) / 1000 : 0, calls };
      }
      return report;
    },
  };
}
