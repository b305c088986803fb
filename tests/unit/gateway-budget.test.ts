/**
 * The gateway's per-request work, counted, not timed (issue #33): an authenticated request costs
 * what is stated here, and a change that adds a SQL statement, a timer or a read of the client's
 * signal to every request fails this file whatever the machine's speed. The app runs in process
 * on real SQLite (better-sqlite3, as `quarry serve` on Node opens it), the driver wrapped to count
 * every statement executed; requests go through app.fetch, 50 at once as a loaded server
 * receives them in one turn of its event loop, then one at a time.
 *
 * Budgets (after a warm-up request, key known):
 * - GET /v1/usage and GET /v1/keys, 50 at once: one `PRAGMA data_version` for all of them (the
 *   key store's change mark is read once per turn, after every request of the turn arrived); no
 *   other statement for /v1/usage; for /v1/keys one read per listed key (its last use) for all, the
 *   account's key index and records kept while the mark stays the same (keys/list-cache.ts); no
 *   read of a request's signal or body; one setImmediate (two for /v1/keys: the mark, the last
 *   uses) and at most one timer for the 50.
 * - GET /v1/usage one at a time: one statement each (the mark), none else. 50 at once share one
 *   promise of the key store's mark (one async step and one string for the turn, not one each).
 * - A metered POST, 50 at once: the units are committed in group transactions (BEGIN, the month's
 *   and the day's count, the window's expiry, COMMIT: 5 statements, and a window row per distinct
 *   millisecond of admission), at most 2 of them for the 50; each request reads its body and its
 *   signal once; a body its Content-Length frames is read whole (Request.text()), not through a
 *   stream over its bytes (on Deno that stream was a fifth of a cached scrape's CPU).
 * - The window's old rows are deleted at most once a second per key, not in every group commit;
 *   a turn of metered requests arms no timer of its own (the hits' timer is not re-armed per commit).
 * - A cached POST /v1/scrape, 50 at once: each hit reads its entry as JSON text (`getJson`), never
 *   through `get`, and sends that text with its two numbers written in: JSON.parse runs once a
 *   request (its body) and JSON.stringify once (the cache key), no more (the entry's parse and the
 *   answer's serialisation were a fifth of the cached POST on Bun).
 * - GET /health, 50 at once: one probe write for all of them; the cache and sources counts not
 *   read again within 2 s.
 * - One Response constructed per request (GET /v1/usage, GET /v1/keys, the cached POST, /health):
 *   a route's `reply` is made its Response once, with the gateway headers (gateway/reply.ts), not
 *   made by the route and remade by the gateway.
 * - Hono's chain: every native route is one handler, the gateway's outer step (request id, CORS,
 *   per-IP bucket, headers, log line; gateway/headers.ts) wrapped around the route's steps
 *   (gateway/pipeline.ts), with the bucket and CORS on or off: Hono's single-handler path, no
 *   compose. The gateway's steps as Hono middleware were six to eight functions, then two.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sqliteConnector from "db0/connectors/better-sqlite3";
import type { Connector } from "db0";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createQuarry, type Quarry } from "../../core/app.ts";
import { parseConfig } from "../../core/config.ts";
import { createKey, ensureAccount } from "../../core/keys/service.ts";
import { buildPorts, type Built } from "../../adapters/shared/bootstrap.ts";
import { cachedStatements } from "../../adapters/shared/statement-cache.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { echoOperation } from "../helpers/test-operation.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";

/** Every SQL statement run on the database, by its text. */
const executed: string[] = [];

function countingConnector(inner: Connector): Connector {
  const wrapStatement = (sql: string, st: Record<string, (...a: unknown[]) => unknown>) =>
    new Proxy(st, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (typeof v !== "function") return v;
        if (prop === "run" || prop === "get" || prop === "all" || prop === "iterate") {
          return (...args: unknown[]) => (executed.push(sql), v.apply(target, args));
        }
        return v.bind(target);
      },
    });
  const wrapDb = (db: Record<string, (...a: unknown[]) => unknown>) =>
    new Proxy(db, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop === "prepare") return (sql: string) => wrapStatement(sql, v.call(target, sql) as never);
        if (prop === "exec") return (sql: string) => (executed.push(sql), v.call(target, sql));
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  let wrapped: unknown;
  return { ...inner, getInstance: async () => (wrapped ??= wrapDb((await inner.getInstance()) as never)) };
}

let built: Built;
let quarry: Quarry;
let secret: string;
let dir: string;
let site: PageServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "quarry-budget-"));
  site = await startPageServer();
  site.route("/article", send("text/html; charset=utf-8", `<html><head><title>Budget</title></head><body><article><h1>Budget</h1>${"<p>A paragraph long enough to be read as the page's own content, not its chrome.</p>".repeat(4)}</article></body></html>`));
  const config = parseConfig({
    QUARRY_DATA_DIR: dir, QUARRY_IP_RATE: "off", QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
    QUARRY_PLANS: '{"enterprise":{"per_minute":1000000000}}',
  }, "test");
  built = await buildPorts(config, { ...nodeRuntime, sqlite: (opts) => cachedStatements(countingConnector(sqliteConnector(opts))) }, new MemoryLogger());
  quarry = createQuarry(built.ports, config, { operations: () => echoOperation() });
  await ensureAccount(built.ports.keys, "acme", "enterprise", config.plans, Date.now());
  secret = (await createKey(built.ports.keys, { account: "acme", name: "budget", scopes: ["search", "keys", "scrape"] }, Date.now())).key;
});

afterAll(async () => {
  await quarry?.stop();
  await quarry?.drain();
  await built?.close();
  await site?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What requests read of the Request the server handed in: on @hono/node-server `signal` and `body` build a whole Request. */
interface Reads { signal: number; body: number }

function request(path: string, reads: Reads, init: { method?: string; body?: string; auth?: boolean; framed?: boolean } = {}): Request {
  const headers: Record<string, string> = {};
  if (init.auth !== false) headers.authorization = `Bearer ${secret}`;
  if (init.body) headers["content-type"] = "application/json";
  // As a client over HTTP/1.1 sends it: the body's length declared.
  if (init.body && init.framed) headers["content-length"] = String(new TextEncoder().encode(init.body).byteLength);
  const real = new Request(`http://127.0.0.1${path}`, { method: init.method ?? "GET", headers, body: init.body });
  return new Proxy(real, {
    get(target, prop) {
      if (prop === "signal") reads.signal++;
      if (prop === "body") reads.body++;
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

interface Spent { statements: string[]; reads: Reads; immediates: number; timeouts: number; responses: number }

/** Sends `n` requests in one go (or one after another) and counts what answering them took, until all are answered. */
async function spend(n: number, make: (reads: Reads) => Request, together = true): Promise<Spent> {
  const reads: Reads = { signal: 0, body: 0 };
  // Timers are held still while the requests are answered, and run after: the window's hits go out in one
  // write at most every 250 ms whatever the number of requests (a timer, not per-request work), so a slow
  // machine taking longer than that over the requests counts the same statements as a fast one.
  // Counted by plain wrappers put back by hand: a vi.spyOn over the fake setTimeout outlived
  // useRealTimers and left every later file of the worker with a setTimeout that never fired.
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  const fakeTimeout = globalThis.setTimeout;
  const realImmediate = globalThis.setImmediate;
  const counts = { immediates: 0, timeouts: 0, responses: 0 };
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => (counts.timeouts++, fakeTimeout(...args))) as typeof setTimeout;
  globalThis.setImmediate = ((...args: Parameters<typeof setImmediate>) => (counts.immediates++, realImmediate(...args))) as typeof setImmediate;
  // Responses constructed (by the app: the test's own clone() constructs none through the global).
  const RealResponse = globalThis.Response;
  globalThis.Response = new Proxy(RealResponse, {
    construct: (target, args, newTarget) => (counts.responses++, Reflect.construct(target, args, newTarget)),
  });
  const from = executed.length;
  try {
    const answer = async (req: Request) => {
      const res = await quarry.app.fetch(req);
      expect(res.status, await res.clone().text()).toBeLessThan(300);
      await res.arrayBuffer();
    };
    if (together) await Promise.all(Array.from({ length: n }, () => answer(make(reads))));
    else for (let i = 0; i < n; i++) await answer(make(reads));
    return { statements: executed.slice(from), reads, ...counts };
  } finally {
    globalThis.setTimeout = fakeTimeout;
    globalThis.setImmediate = realImmediate;
    globalThis.Response = RealResponse;
    vi.runOnlyPendingTimers();
    vi.useRealTimers();
  }
}

const DATA_VERSION = "PRAGMA data_version";
const other = (s: Spent) => s.statements.filter((sql) => sql !== DATA_VERSION);

describe("the gateway's work per authenticated request (budgets in the file's header)", () => {
  beforeAll(async () => {
    // Warm-up: the key is looked up, the month's counts read, last_used_at written once.
    await spend(1, (r) => request("/v1/usage", r));
    await spend(1, (r) => request("/v1/keys", r));
    await spend(1, (r) => request("/v1/test/echo", r, { method: "POST", body: '{"query":"warm"}' }));
    await spend(1, (r) => request("/health", r, { auth: false }));
    await new Promise((r) => setTimeout(r, 300));
  });

  it("GET /v1/usage, 50 at once: one mark read for all, nothing else from SQLite, no signal or body, one immediate", async () => {
    const s = await spend(50, (r) => request("/v1/usage", r));
    expect(s.statements.filter((sql) => sql === DATA_VERSION)).toHaveLength(1);
    expect(other(s)).toEqual([]);
    expect(s.reads).toEqual({ signal: 0, body: 0 });
    expect(s.immediates).toBe(1);
    expect(s.timeouts).toBeLessThanOrEqual(1);
    // One Response each: the route's reply is made one with the gateway headers, not made and remade.
    expect(s.responses).toBe(50);
  });

  it("GET /v1/usage, 50 at once: the key store's mark is one promise for all of them, not an async step each", async () => {
    const keys = built.ports.keys;
    const marks = vi.spyOn(keys, "changeMark");
    try {
      await spend(50, (r) => request("/v1/usage", r));
      expect(marks).toHaveBeenCalledTimes(50);
      expect(new Set(marks.mock.results.map((r) => r.value)).size).toBe(1);
    } finally {
      marks.mockRestore();
    }
  });

  it("GET /v1/usage, one at a time: the mark and nothing else per request", async () => {
    const s = await spend(20, (r) => request("/v1/usage", r), false);
    expect(s.statements.filter((sql) => sql === DATA_VERSION)).toHaveLength(20);
    expect(other(s).filter((sql) => !/lastused/.test(sql) && !/INSERT INTO "?quarry_kv/.test(sql))).toEqual([]);
    // last_used_at: at most one write a second per key.
    expect(other(s).length).toBeLessThanOrEqual(2);
    expect(s.reads).toEqual({ signal: 0, body: 0 });
  });

  it("GET /v1/keys, 50 at once: one mark read, one last-used read for all, the key index not read again", async () => {
    const s = await spend(50, (r) => request("/v1/keys", r));
    expect(s.statements.filter((sql) => sql === DATA_VERSION)).toHaveLength(1);
    // The account has one key: its last use is read fresh, once for the turn's 50 requests (read
    // after all of them asked); its records are kept under the mark.
    expect(other(s).filter((sql) => /LIKE/i.test(sql))).toEqual([]);
    expect(other(s).length).toBeLessThanOrEqual(1);
    expect(s.reads).toEqual({ signal: 0, body: 0 });
    // One immediate for the mark, one for the last-use read.
    expect(s.immediates).toBe(2);
    expect(s.responses).toBe(50);
  });

  it("a metered POST, 50 at once: at most two group commits, one body and one signal read each", async () => {
    const s = await spend(50, (r) => request("/v1/test/echo", r, { method: "POST", body: '{"query":"q"}' }));
    const commits = s.statements.filter((sql) => sql === "COMMIT").length;
    expect(commits).toBeGreaterThanOrEqual(1);
    expect(commits).toBeLessThanOrEqual(2);
    expect(s.statements.filter((sql) => sql === DATA_VERSION)).toHaveLength(1);
    // Per group commit: BEGIN, the month's and the day's count, the window's expiry, COMMIT, and
    // one window row per distinct millisecond in which units were admitted.
    // last_used_at is written at most once a second per key (not per request): on a loaded machine a
    // second can pass between the files' cases, so that one write may fall in here.
    const statements = other(s).filter((sql) => !/INSERT INTO "?quarry_kv/.test(sql));
    const hits = statements.filter((sql) => sql.startsWith("INSERT INTO quarry_window"));
    expect(statements.length - hits.length, JSON.stringify(statements)).toBeLessThanOrEqual(commits * 5);
    expect(other(s).length - statements.length).toBeLessThanOrEqual(1);
    expect(hits.length).toBeLessThanOrEqual(50);
    expect(s.reads).toEqual({ signal: 50, body: 50 });
    // The window's old rows: at most once a second per key, not once per commit.
    expect(other(s).filter((sql) => sql.startsWith("DELETE FROM quarry_window")).length).toBeLessThanOrEqual(1);
    expect(s.timeouts).toBeLessThanOrEqual(1);
  });

  it("a cached POST /v1/scrape, 50 at once: the entry read as JSON text, one JSON.parse (the body) and one JSON.stringify (the cache key) each", async () => {
    const body = JSON.stringify({ url: `${site.url}/article`, formats: ["text"] });
    await spend(1, (r) => request("/v1/scrape", r, { method: "POST", body, framed: true })); // the page read, then cached
    const cache = built.ports.cache as Required<typeof built.ports.cache>;
    const get = vi.spyOn(cache, "get");
    const getJson = vi.spyOn(cache, "getJson");
    const { parse, stringify } = JSON;
    const calls = { parse: 0, stringify: 0 };
    JSON.parse = ((...a: Parameters<typeof parse>) => (calls.parse++, parse(...a))) as typeof parse;
    JSON.stringify = ((...a: Parameters<typeof stringify>) => (calls.stringify++, stringify(...a))) as typeof stringify;
    let s: Spent;
    try {
      s = await spend(50, (r) => request("/v1/scrape", r, { method: "POST", body, framed: true }));
    } finally {
      JSON.parse = parse;
      JSON.stringify = stringify;
    }
    const hits = getJson.mock.results.length;
    get.mockRestore();
    getJson.mockRestore();
    expect(get).not.toHaveBeenCalled();
    expect(hits).toBe(50);
    expect(calls).toEqual({ parse: 50, stringify: 50 });
    expect(s.responses).toBe(50);
    expect(site.hits.filter((h) => h === "/article")).toHaveLength(1);
    expect(s.statements.filter((sql) => sql === "COMMIT").length).toBeLessThanOrEqual(2);
    expect(s.reads).toEqual({ signal: 50, body: 0 });
  });

  it("a metered POST whose Content-Length frames its body, 50 at once: the body read whole, no stream over it", async () => {
    const s = await spend(50, (r) => request("/v1/test/echo", r, { method: "POST", body: '{"query":"q"}', framed: true }));
    expect(s.statements.filter((sql) => sql === DATA_VERSION)).toHaveLength(1);
    expect(s.reads).toEqual({ signal: 50, body: 0 });
  });

  it("GET /health, 50 at once: one probe write for all", async () => {
    await new Promise((r) => setTimeout(r, 2_100));
    const first = await spend(50, (r) => request("/health", r, { auth: false }));
    expect(first.statements.filter((sql) => /INSERT INTO quarry_probe/.test(sql))).toHaveLength(1);
    expect(first.responses).toBe(50);
    const again = await spend(50, (r) => request("/health", r, { auth: false }));
    // Within 2 s the cache and sources counts are not read again: the probe is all.
    // (Named in full when it fails: one clone-alone run on a loaded machine counted five here, unseen.)
    expect(again.statements.filter((sql) => !/quarry_probe/.test(sql)), JSON.stringify(again.statements)).toEqual([]);
    expect(again.statements.length).toBeLessThanOrEqual(1);
  });

  it("Hono's chain: one function for each native route (the gateway's step and the route's pipeline in one), so Hono runs no compose", () => {
    for (const [method, path] of [["GET", "/v1/usage"], ["GET", "/v1/keys"], ["POST", "/v1/keys"], ["POST", "/v1/test/echo"], ["GET", "/health"], ["GET", "/openapi.json"]] as const) {
      const [handlers] = quarry.app.router.match(method, path);
      expect(handlers, `${method} ${path}`).toHaveLength(1);
    }
  });

  it("with the per-IP bucket and CORS on (the bucket is on by default), still one function per native route", async () => {
    const config = parseConfig({ QUARRY_DATA_DIR: dir, QUARRY_CORS_ORIGINS: "https://app.example" }, "test");
    const other = createQuarry(built.ports, config);
    try {
      for (const [method, path] of [["GET", "/v1/usage"], ["GET", "/v1/keys"], ["POST", "/v1/scrape"], ["GET", "/health"]] as const) {
        const [handlers] = other.app.router.match(method, path);
        expect(handlers, `${method} ${path}`).toHaveLength(1);
      }
    } finally {
      await other.stop();
    }
  });
});
