import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import type { FetchPort } from "../../core/ports.ts";
import { WEB_BACKENDS } from "../../core/backends/catalogue.ts";
import { createRegistry } from "../../core/backends/registry.ts";
import type { BreakerPolicy } from "../../core/backends/circuit-breaker.ts";
import { createRunner, describeStatuses, type RunOutcome } from "../../core/backends/runner.ts";
import { FakeClock, fixture, flush, query } from "./helpers.ts";

type Handler = (req: Request, signal: AbortSignal) => Promise<Response>;

const WIKI = fixture("wikipedia/mw_api_generator_search_formatversion2.json");
const DDG = fixture("duckduckgo/html_results_exit_nvim.html");
const CAPTCHA = fixture("duckduckgo/html_anomaly_challenge_synthetic.html");

const ok = (body: string) => async () => new Response(body, { status: 200 });
const never: Handler = () => new Promise<Response>(() => {}); // ignores the abort signal entirely

/** A fetch that routes by host and records which hosts were called. */
function fakeFetch(routes: Record<string, Handler>) {
  const calls: string[] = [];
  const fetch: FetchPort = (input, init) => {
    const req = input instanceof Request ? input : new Request(input);
    const host = new URL(req.url).hostname;
    calls.push(host);
    const handler = routes[host];
    if (!handler) return Promise.reject(new TypeError(`no route for ${host}`));
    return handler(req, init?.signal ?? new AbortController().signal);
  };
  return { fetch, calls };
}

function setup(routes: Record<string, Handler>, opts: { timeoutMs?: number; deadlineMs?: number; breaker?: Partial<BreakerPolicy> } = {}) {
  const clock = new FakeClock();
  const { fetch, calls } = fakeFetch(routes);
  const registry = createRegistry({ brave: { key: "k" } }, WEB_BACKENDS); // searxng stays disabled
  const runner = createRunner({ registry, fetch, clock, timers: clock, ...opts });
  /** Starts a run and advances the clock until it settles (or `maxMs` passes). */
  async function run(backends?: string[], maxMs = 60_000): Promise<{ out: RunOutcome; tookMs: number }> {
    const start = clock.now();
    let out: RunOutcome | undefined;
    const pending = runner.run({ query: query({ query: "queens", maxResults: 20 }), backends }).then((o) => (out = o));
    for (let waited = 0; !out && waited < maxMs; waited += 100) await clock.advance(100);
    await pending;
    return { out: out!, tookMs: clock.now() - start };
  }
  return { clock, calls, runner, run };
}

describe("runner deadline and timeouts", () => {
  it("reports a hanging backend as timeout and answers at the deadline with the others' results", async () => {
    const clock = new FakeClock();
    const { fetch } = fakeFetch({ "html.duckduckgo.com": never, "en.wikipedia.org": ok(WIKI), "api.search.brave.com": ok(fixture("brave/web_search_blue_tack_minimal.json")) });
    const runner = createRunner({ registry: createRegistry({ brave: { key: "k" } }, WEB_BACKENDS), fetch, clock, timers: clock, timeoutMs: 5_000 });
    let settled = false;
    const pending = runner.run({ query: query(), deadline: clock.now() + 3_000 }).then((o) => ((settled = true), o));
    await clock.advance(2_999);
    expect(settled).toBe(false);
    await clock.advance(1);
    const out = await pending;
    expect(out.backends.duckduckgo).toEqual({ status: "timeout", results: 0, latency_ms: 3_000, error: "timeout: request deadline reached" });
    expect(out.backends.wikipedia).toMatchObject({ status: "ok", results: 20, latency_ms: 0 });
    expect(out.backends.brave).toMatchObject({ status: "ok", results: 1 });
    expect(out.backends.searxng).toMatchObject({ status: "disabled", error: expect.stringContaining("QUARRY_SEARXNG_URL") });
    expect(Object.keys(out.results)).toEqual(["wikipedia", "brave"]);
    expect(out.results.wikipedia![0]!.title).toBe("IND Queens Boulevard Line");
    expect(clock.pendingTimers()).toBe(0);
    // Cut by the request's deadline: not held against the backend, nor counted for it.
    expect(runner.health().duckduckgo).toEqual({ status: "unknown", success_rate: 0, calls: 0 });
    expect(runner.health().wikipedia).toEqual({ status: "ok", success_rate: 1, calls: 1 });
  });

  it("aborts a backend past its own timeout and backs off briefly", async () => {
    let aborted = false;
    const hangsUntilAborted: Handler = (_req, signal) =>
      new Promise((_, reject) => signal.addEventListener("abort", () => ((aborted = true), reject(new DOMException("aborted", "AbortError")))));
    const { run, runner, clock } = setup({ "html.duckduckgo.com": hangsUntilAborted, "en.wikipedia.org": ok(WIKI) }, { timeoutMs: 2_000, deadlineMs: 8_000, breaker: { transientThreshold: 1 } });
    const first = await run(["duckduckgo", "wikipedia"]);
    expect(first.tookMs).toBe(2_000);
    expect(aborted).toBe(true);
    expect(first.out.backends.duckduckgo).toMatchObject({ status: "timeout", latency_ms: 2_000, error: "timeout: no answer within 2000 ms" });
    expect(runner.health().duckduckgo!.status).toBe("suspended");
    const second = await run(["duckduckgo", "wikipedia"]);
    expect(second.out.backends.duckduckgo).toMatchObject({ status: "skipped", error: expect.stringContaining("suspended until") });
    await clock.advance(5_000);
    // No longer suspended, but its only call in the window failed.
    expect(runner.health().duckduckgo).toEqual({ status: "failing", success_rate: 0, calls: 1 });
  });
});

describe("runner circuit breaker", () => {
  it("suspends a backend for exactly its Retry-After after a 429", async () => {
    const { run, calls, clock } = setup({ "api.search.brave.com": async () => new Response("", { status: 429, headers: { "retry-after": "120" } }) });
    const first = await run(["brave"]);
    expect(first.out.backends.brave).toMatchObject({ status: "error", error: expect.stringMatching(/^rate_limited:/) });
    await clock.advance(119_000);
    expect((await run(["brave"])).out.backends.brave).toMatchObject({ status: "skipped", error: expect.stringContaining("rate_limited") });
    expect(calls).toEqual(["api.search.brave.com"]);
    await clock.advance(1_000);
    expect((await run(["brave"])).out.backends.brave!.status).toBe("error");
    expect(calls).toHaveLength(2);
  });

  it("suspends for an hour after a CAPTCHA, then twice as long", async () => {
    const { run, calls, clock, runner } = setup({ "html.duckduckgo.com": async () => new Response(CAPTCHA, { status: 202 }) });
    expect((await run(["duckduckgo"])).out.backends.duckduckgo).toMatchObject({ status: "error", error: expect.stringMatching(/^captcha:/) });
    expect(runner.health().duckduckgo).toEqual({ status: "suspended", success_rate: 0, calls: 1 });
    await clock.advance(59 * 60_000);
    expect((await run(["duckduckgo"])).out.backends.duckduckgo!.status).toBe("skipped");
    await clock.advance(60_000);
    expect((await run(["duckduckgo"])).out.backends.duckduckgo!.status).toBe("error");
    await clock.advance(60 * 60_000 + 1_000);
    expect((await run(["duckduckgo"])).out.backends.duckduckgo!.status).toBe("skipped");
    await clock.advance(60 * 60_000);
    expect((await run(["duckduckgo"])).out.backends.duckduckgo!.status).toBe("error");
    expect(calls).toHaveLength(3);
  });

  it("counts parse errors without suspending", async () => {
    const { run, calls, runner } = setup({ "en.wikipedia.org": ok("<html>not the API</html>") });
    for (let i = 0; i < 3; i++) {
      expect((await run(["wikipedia"])).out.backends.wikipedia).toMatchObject({ status: "error", error: expect.stringMatching(/^parse:/) });
    }
    expect(calls).toHaveLength(3);
    expect(runner.health().wikipedia).toEqual({ status: "failing", success_rate: 0, calls: 3 });
  });

  it("suspends on transient failures only when they come in a row (three by default)", async () => {
    const { run, runner, clock } = setup({});
    for (let i = 0; i < 2; i++) {
      expect((await run(["wikipedia"])).out.backends.wikipedia!.status).toBe("error");
      expect(runner.health().wikipedia!.status).not.toBe("suspended");
    }
    await run(["wikipedia"]);
    expect(runner.health().wikipedia!.status).toBe("suspended");
    expect((await run(["wikipedia"])).out.backends.wikipedia!.status).toBe("skipped");
    await clock.advance(5_000);
    expect(runner.health().wikipedia!.status).not.toBe("suspended");
  });

  it("reports network failures as errors and backs off exponentially", async () => {
    const { run, clock, calls } = setup({}, { breaker: { transientThreshold: 1 } });
    expect((await run(["wikipedia"])).out.backends.wikipedia).toMatchObject({ status: "error", error: expect.stringMatching(/^network:/) });
    await clock.advance(5_000);
    await run(["wikipedia"]); // second failure: 10 s
    await clock.advance(9_000);
    expect((await run(["wikipedia"])).out.backends.wikipedia!.status).toBe("skipped");
    await clock.advance(1_000);
    await run(["wikipedia"]);
    expect(calls).toHaveLength(3);
  });
});

describe("runner selection and health", () => {
  it("runs only requested, enabled backends and reports the rest", async () => {
    const { run, calls } = setup({ "en.wikipedia.org": ok(WIKI) });
    const { out } = await run(["wikipedia", "searxng", "unknown"]);
    expect(calls).toEqual(["en.wikipedia.org"]);
    expect(Object.fromEntries(Object.entries(out.backends).map(([id, s]) => [id, s.status]))).toEqual({
      searxng: "disabled",
      duckduckgo: "skipped",
      wikipedia: "ok",
      brave: "skipped",
    });
  });

  it("computes the success rate over a sliding window of real calls, without calling upstreams", async () => {
    let fail = false;
    const flaky: Handler = async () => (fail ? new Response("<html>", { status: 200 }) : new Response(DDG, { status: 200 }));
    const { run, runner, clock, calls } = setup({ "html.duckduckgo.com": flaky });
    for (const outcome of [false, false, false, true]) {
      fail = outcome;
      await run(["duckduckgo"]);
    }
    expect(runner.health().duckduckgo).toEqual({ status: "ok", success_rate: 0.75, calls: 4 });
    const before = calls.length;
    runner.health();
    await flush();
    expect(calls).toHaveLength(before);
    await clock.advance(5 * 60_000 + 1);
    // The window is empty again: nothing to judge by.
    expect(runner.health().duckduckgo).toEqual({ status: "unknown", success_rate: 0, calls: 0 });
    expect(runner.health().searxng).toEqual({ status: "disabled", success_rate: 0, calls: 0 });
  });
});

describe("failure wording", () => {
  it("names the network cause (a refused connection), not a bare 'fetch failed', with real fetch", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const registry = createRegistry({ duckduckgo: { url: `http://127.0.0.1:${port}` } }, WEB_BACKENDS);
    const runner = createRunner({ registry, fetch: (input, init) => fetch(input, init), clock: { now: () => Date.now() }, timeoutMs: 5_000 });
    const out = await runner.run({ query: query(), backends: ["duckduckgo"] });
    expect(out.backends.duckduckgo).toMatchObject({ status: "error", error: expect.stringMatching(/^network: fetch failed: .*ECONNREFUSED/) });
  });

  it("says each backend's state once: no 'timeout: timeout:'", async () => {
    const { run } = setup({ "html.duckduckgo.com": never, "en.wikipedia.org": ok(WIKI), "api.search.brave.com": ok(fixture("brave/web_search_blue_tack_minimal.json")) }, { timeoutMs: 2_000 });
    const { out } = await run();
    const text = describeStatuses(out.backends);
    expect(text).toContain("duckduckgo (timeout: no answer within 2000 ms)");
    expect(text).toMatch(/wikipedia \(ok, \d+ results\)/);
    expect(text).not.toMatch(/(\w+): \1:/);
  });
});
