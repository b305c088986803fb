/**
 * Property-based fuzzing of every route the app mounts (fast-check, bounded): random bodies
 * (near-valid ones built from each schema's own field names, arbitrary JSON, broken JSON),
 * content types, Authorization headers and path parameters. Whatever arrives:
 * - no 5xx but the documented upstream failures (502 upstream_error, 504 timeout);
 * - every error has the error shape, and its request id is the X-Request-Id header;
 * - no answer takes longer than the route's own deadline (no hang);
 * - a refused request (4xx) changes no usage.
 * The routes come from the app's own table, so new operations are fuzzed without edits here.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKEND_IDS } from "../../core/backends/catalogue.ts";
import type { RouteDef } from "../../core/gateway/route.ts";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { startReplayServer, type ReplayServer } from "../helpers/replay-server.ts";

const RUNS = Number(process.env.QUARRY_FUZZ_RUNS ?? 60);
const UPSTREAM_FAILURES = new Set([502, 504]);
const REQUEST_ID = /^req_[0-9A-HJKMNP-TV-Z]{26}$/;

let replay: ReplayServer;
let site: PageServer;
let t: TestApp;
let full: string;
let narrow: string;
let routes: RouteDef[];

beforeAll(async () => {
  replay = await startReplayServer();
  site = await startPageServer();
  site.route("/page", send("text/html", "<html><head><title>A page</title></head><body><article><p>Some words about fuzzing.</p></article></body></html>"));
  const env = Object.fromEntries(BACKEND_IDS.map((id) => [`QUARRY_${id.toUpperCase()}_URL`, replay.baseFor(id)]));
  // Pages: only the local site; every other name fails to resolve at once (no internet here).
  const pages = createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]), resolver: async (host) => (host === "127.0.0.1" ? ["127.0.0.1"] : []) });
  t = await makeApp({ env: { ...env, QUARRY_BRAVE_KEY: "k", QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_PLANS: '{"free":{"quota":null,"per_minute":100000,"jobs_concurrent":1000}}' }, pages });
  t.clock.now = () => Date.now();
  full = (await t.key("acme", ["search", "research", "scrape", "keys"])).secret;
  narrow = (await t.key("other", ["search"])).secret;
  const doc = await (await t.request("/openapi.json")).json();
  routes = Object.entries(doc.paths as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> } }>>).flatMap(
    ([path, ops]) => Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      fields: Object.keys(op.requestBody?.content["application/json"]?.schema.properties ?? {}),
    })) as unknown as RouteDef[],
  );
}, 60_000);

afterAll(async () => {
  await t?.close();
  await replay?.close();
  await site?.close();
});

/** Values a field might be given: right-looking ones and every wrong type. */
const fieldValue = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 600 }),
  fc.constantFrom("basic", "summary", "detailed", "full", "day", "week", "markdown", "html", "links", "search", "keys", "hackernews", "reddit", "duckduckgo"),
  fc.constantFrom("http://127.0.0.1/page", "file:///etc/passwd", "http://169.254.169.254/", "https://unknown.example/", "javascript:alert(1)", "http://[::1]/", "not a url"),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1e308, Number.MAX_SAFE_INTEGER + 2, 99999999999999999999999),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string({ maxLength: 20 }), fc.integer()), { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
);

/** A valid body per operation, which the fuzzer then bends field by field. */
const examples = (): Record<string, Record<string, unknown>> => ({
  "/v1/keys": { name: "fuzz", scopes: ["search"] },
  "/v1/scrape": { url: `${site.url}/page` },
  "/v1/map": { url: `${site.url}/page`, sitemap: "skip" },
  // Jobs read a page that answers 404: a failed page costs nothing, so no job changes usage behind the fuzzer's back.
  "/v1/crawl": { url: `${site.url}/gone`, max_depth: 0 },
  "/v1/batch/scrape": { urls: [`${site.url}/gone`] },
  "/v1/collections": { name: "fuzz-made" },
  // Paused: the fuzzer's monitors never run.
  "/v1/monitors": { scrape: { url: `${site.url}/gone` }, webhook: { url: `${site.url}/hook` }, paused: true },
  "/v1/monitors/{id}": { paused: true },
  "/v1/collections/{name}/documents": { documents: [{ id: "fuzzed", text: "Some words about fuzzing." }] },
});

const baseBody = (path: string, fields: string[]) => examples()[path] ?? (fields.includes("query") ? { query: "blue tack" } : {});

/**
 * Each route's first run: its valid body, the full key, JSON, and a real id of the path's kind. The
 * random runs alone left a route with a path parameter unreached about once in 60 runs of the file
 * (and more often when a loaded machine cut the runs short at their time limit).
 */
function validCall(path: string, fields: string[]): [string, () => string, "application/json", string] {
  const param = !path.includes("{") ? "none" : path.includes("{name}") ? "@collection" : path.startsWith("/v1/keys") ? "@fresh" : "@job";
  return [JSON.stringify(baseBody(path, fields)), () => `Bearer ${full}`, "application/json", param];
}

function bodyFor(path: string, fields: string[]) {
  const base = baseBody(path, fields);
  const named = fields.length
    ? fc.dictionary(fc.constantFrom(...fields), fieldValue, { maxKeys: 2 })
    : fc.constant({});
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(JSON.stringify(base)) },
    { weight: 6, arbitrary: named.map((o) => JSON.stringify({ ...base, ...o })) },
    { weight: 2, arbitrary: named.map((o) => JSON.stringify(o)) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((j) => JSON.stringify(j)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 80 }) },
    { weight: 1, arbitrary: fc.constant("") },
  );
}

const authHeader = () =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant(() => `Bearer ${full}`) },
    { weight: 1, arbitrary: fc.constant(() => `Bearer ${narrow}`) },
    { weight: 1, arbitrary: fc.constant(() => undefined) },
    { weight: 1, arbitrary: fc.constant(() => `Bearer qry_${"0".repeat(64)}`) },
    { weight: 1, arbitrary: fc.string({ maxLength: 90 }).map((s) => () => s) },
  );

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant("application/json") },
  { weight: 1, arbitrary: fc.constantFrom(undefined, "text/plain", "application/json; charset=utf-8", "multipart/form-data", "application/x-www-form-urlencoded") },
);

/**
 * `@fresh` stands for a real key of the calling account, made for this run (so DELETE can succeed).
 * Real ids weigh more than the others: at 1 in 6, a job route went all 60 runs without one now and
 * then (about 1 CI run in 150), and failed the check that every operation was reached.
 */
const pathParam = fc.oneof(
  { weight: 3, arbitrary: fc.constant("@fresh") },
  { weight: 3, arbitrary: fc.constant("@job") },
  { weight: 3, arbitrary: fc.constant("@collection") },
  { weight: 1, arbitrary: fc.constant("key_01JZZZZZZZZZZZZZZZZZZZZZZZ") },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9_%.-]{0,40}$/) },
  { weight: 1, arbitrary: fc.constant("..%2f..%2fetc") },
  { weight: 1, arbitrary: fc.constant("%00") },
);

/** `@job` stands for a real job of the calling account, of the route's kind (crawl or batch), or on a monitor's route one of its monitors (made if it has none). */
async function jobOf(path: string): Promise<string> {
  if (path.startsWith("/v1/monitors/")) {
    const [first] = (await (await t.request("/v1/monitors", { key: full })).json()).data;
    if (first) return first.id;
    return (await (await t.request("/v1/monitors", { method: "POST", key: full, json: examples()["/v1/monitors"] })).json()).id;
  }
  const batch = path.startsWith("/v1/batch/");
  const res = await t.request(batch ? "/v1/batch/scrape" : "/v1/crawl", { method: "POST", key: full, json: examples()[batch ? "/v1/batch/scrape" : "/v1/crawl"] });
  return (await res.json()).id;
}

/** `@collection` stands for a real collection of the calling account holding a document of the same id (made again if a DELETE removed it). */
async function collection(): Promise<string> {
  await t.request("/v1/collections", { method: "POST", key: full, json: { name: "fuzzed" } });
  await t.request("/v1/collections/fuzzed/documents", { method: "POST", key: full, json: { documents: [{ id: "fuzzed", text: "Some words about fuzzing." }] } });
  return "fuzzed";
}

async function usedOf(secret: string): Promise<number> {
  return (await (await t.request("/v1/usage", { key: secret })).json()).used;
}

describe("every route under random input", () => {
  it("answers within its deadline, in the error shape, never with an undocumented 5xx, and refusals cost nothing", async () => {
    const mounted = routes as unknown as Array<{ method: string; path: string; fields: string[] }>;
    const reached = new Set<string>();
    expect(mounted.length).toBeGreaterThan(8);
    for (const route of mounted) {
      await fc.assert(
        fc.asyncProperty(bodyFor(route.path, route.fields), authHeader(), contentType, pathParam, async (body, auth, type, param) => {
          const id = param === "@fresh" ? (await t.key("acme", ["search"])).id : param === "@job" ? await jobOf(route.path) : param === "@collection" ? await collection() : param;
          const path = route.path.replace(/\{[a-z_]+\}/g, encodeURIComponent(id) || "x");
          const headers: Record<string, string> = {};
          const authorization = auth();
          if (authorization !== undefined) headers.authorization = authorization;
          if (type) headers["content-type"] = type;
          const before = await Promise.all([usedOf(full), usedOf(narrow)]);
          const started = Date.now();
          const res = await t.request(path, { method: route.method, headers, ...(route.method === "GET" || route.method === "DELETE" ? {} : { body }) });
          const text = await res.text();
          if (res.status < 400 || UPSTREAM_FAILURES.has(res.status)) reached.add(`${route.method} ${route.path}`);
          const took = Date.now() - started;
          const where = `${route.method} ${path} ${body.slice(0, 120)} → ${res.status} ${text.slice(0, 200)}`;
          expect(took, where).toBeLessThan(20_000);
          // A 503 is documented only as browser_unavailable (this app has no browser: rendering asked for
          // with wait_for or actions says how to install one); any other 5xx beyond upstream failures is a bug.
          const browserless = res.status === 503 && text.includes('"code":"browser_unavailable"');
          expect(res.status < 500 || UPSTREAM_FAILURES.has(res.status) || browserless, where).toBe(true);
          expect(res.headers.get("x-request-id"), where).toMatch(REQUEST_ID);
          if (res.status >= 400) {
            const err = JSON.parse(text).error;
            expect(typeof err.code, where).toBe("string");
            expect(typeof err.message, where).toBe("string");
            expect(err.request_id, where).toBe(res.headers.get("x-request-id"));
            if (res.status < 500) expect(await Promise.all([usedOf(full), usedOf(narrow)]), where).toEqual(before);
          }
        }),
        // FUZZ_SEED (and FUZZ_PATH) replay a reported failure exactly.
        { numRuns: RUNS, interruptAfterTimeLimit: 60_000, examples: [validCall(route.path, route.fields)], ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED), path: process.env.FUZZ_PATH } : {}) },
      );
    }
    // The fuzzer got past validation into every operation, not just into the gateway's refusals.
    for (const route of mounted) expect(reached, `${route.method} ${route.path} was never answered`).toContain(`${route.method} ${route.path}`);
  }, 600_000);
});

/** The compatible APIs and /mcp answer in their clients' shapes, each with Quarry's request id kept. */
type Shape = "tavily" | "firecrawl" | "mcp";
const COMPAT: Array<{ method: string; path: string; shape: Shape; fields: string[]; base: () => Record<string, unknown> }> = [
  { method: "POST", path: "/compat/tavily/search", shape: "tavily", fields: ["query", "search_depth", "max_results", "include_domains", "exclude_domains", "time_range", "days", "include_answer", "include_raw_content", "topic", "api_key", "country"], base: () => ({ query: "blue tack" }) },
  { method: "POST", path: "/compat/tavily/extract", shape: "tavily", fields: ["urls", "format", "extract_depth", "timeout", "api_key", "include_images"], base: () => ({ urls: [`${site.url}/page`] }) },
  { method: "POST", path: "/compat/tavily/research", shape: "tavily", fields: ["input", "model", "citation_format", "api_key", "stream"], base: () => ({ input: "blue tack" }) },
  { method: "GET", path: "/compat/tavily/research/{id}", shape: "tavily", fields: [], base: () => ({}) },
  { method: "GET", path: "/compat/tavily/usage", shape: "tavily", fields: [], base: () => ({}) },
  { method: "POST", path: "/compat/firecrawl/v2/scrape", shape: "firecrawl", fields: ["url", "formats", "onlyMainContent", "timeout", "waitFor", "actions", "origin", "mobile"], base: () => ({ url: `${site.url}/page` }) },
  { method: "POST", path: "/compat/firecrawl/v2/search", shape: "firecrawl", fields: ["query", "limit", "tbs", "sources", "scrapeOptions", "includeDomains", "country", "origin"], base: () => ({ query: "blue tack" }) },
  { method: "POST", path: "/compat/firecrawl/v1/scrape", shape: "firecrawl", fields: ["url", "formats", "onlyMainContent", "timeout", "origin"], base: () => ({ url: `${site.url}/page` }) },
  { method: "POST", path: "/compat/firecrawl/v1/search", shape: "firecrawl", fields: ["query", "limit", "lang", "country", "tbs", "scrapeOptions"], base: () => ({ query: "blue tack" }) },
  { method: "POST", path: "/compat/tavily/map", shape: "tavily", fields: ["url", "limit", "select_paths", "exclude_paths", "timeout", "max_depth"], base: () => ({ url: `${site.url}/page`, limit: 5 }) },
  { method: "POST", path: "/compat/tavily/crawl", shape: "tavily", fields: ["url", "limit", "max_depth", "select_paths", "format", "timeout"], base: () => ({ url: `${site.url}/page`, limit: 2, timeout: 10 }) },
  { method: "POST", path: "/compat/firecrawl/v2/map", shape: "firecrawl", fields: ["url", "limit", "search", "sitemap", "includeSubdomains", "timeout"], base: () => ({ url: `${site.url}/page`, limit: 5 }) },
  { method: "POST", path: "/compat/firecrawl/v2/crawl", shape: "firecrawl", fields: ["url", "limit", "maxDiscoveryDepth", "includePaths", "excludePaths", "scrapeOptions", "webhook"], base: () => ({ url: `${site.url}/page`, limit: 2 }) },
  { method: "GET", path: "/compat/firecrawl/v2/crawl/{id}", shape: "firecrawl", fields: [], base: () => ({}) },
  { method: "DELETE", path: "/compat/firecrawl/v2/crawl/{id}", shape: "firecrawl", fields: [], base: () => ({}) },
  { method: "GET", path: "/compat/firecrawl/v2/crawl/{id}/errors", shape: "firecrawl", fields: [], base: () => ({}) },
  { method: "POST", path: "/compat/firecrawl/v2/batch/scrape", shape: "firecrawl", fields: ["urls", "formats", "ignoreInvalidURLs", "webhook"], base: () => ({ urls: [`${site.url}/page`] }) },
  { method: "GET", path: "/compat/firecrawl/v2/batch/scrape/{id}", shape: "firecrawl", fields: [], base: () => ({}) },
  { method: "POST", path: "/compat/firecrawl/v1/map", shape: "firecrawl", fields: ["url", "limit", "ignoreSitemap", "sitemapOnly"], base: () => ({ url: `${site.url}/page`, limit: 5 }) },
  { method: "POST", path: "/compat/firecrawl/v1/crawl", shape: "firecrawl", fields: ["url", "limit", "maxDepth", "scrapeOptions"], base: () => ({ url: `${site.url}/page`, limit: 2 }) },
  { method: "DELETE", path: "/compat/firecrawl/v1/crawl/{id}/errors", shape: "firecrawl", fields: [], base: () => ({}) },
  { method: "DELETE", path: "/compat/firecrawl/v1/batch/scrape/{id}/errors", shape: "firecrawl", fields: [], base: () => ({}) },
  { method: "POST", path: "/mcp", shape: "mcp", fields: ["jsonrpc", "id", "method", "params"], base: () => ({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "search", arguments: { query: "blue tack" } } }) },
];

const mcpMessage = fc.oneof(
  fc.record({ jsonrpc: fc.constant("2.0"), id: fc.integer(), method: fc.constant("tools/call"), params: fc.record({ name: fc.constantFrom("search", "scrape", "research", "video_search", "social_research", "map", "crawl", "crawl_status", "crawl_cancel", "batch_scrape", "batch_scrape_cancel", "nope"), arguments: fc.dictionary(fc.constantFrom("query", "url", "urls", "id", "skip", "tier", "max_results", "formats", "stream", "limit"), fieldValue, { maxKeys: 3 }) }) }),
  fc.record({ jsonrpc: fc.constant("2.0"), id: fc.integer(), method: fc.constantFrom("initialize", "tools/list", "ping", "resources/list", "nope"), params: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }) }),
);

/**
 * Use outside the crawl and research groups: jobs started by earlier runs meter their pages while they
 * run, and a Tavily research task started by an earlier run gives its unit back when its stream fails
 * later (on a loaded machine the replayed engines miss its deadline). The native fuzz above checks
 * research's refusals, which never start a task.
 */
async function syncUsedOf(secret: string): Promise<number> {
  const u = await (await t.request("/v1/usage", { key: secret })).json();
  return u.used - (u.endpoints.crawl ?? 0) - (u.endpoints.research ?? 0);
}

function errorShape(shape: Shape, status: number, json: Record<string, unknown>, requestId: string | null, where: string) {
  if (shape === "tavily") {
    const detail = json.detail as Record<string, unknown>;
    expect(typeof detail?.error, where).toBe("string");
    expect(detail.request_id, where).toBe(requestId);
    expect(json.error, where).toBeUndefined();
  } else if (shape === "firecrawl") {
    expect(json.success, where).toBe(false);
    expect(typeof json.error, where).toBe("string");
    expect(json.request_id, where).toBe(requestId);
  } else if (json.jsonrpc !== "2.0") {
    // /mcp: the transport's own refusals are JSON-RPC errors; the gateway's are Quarry's.
    const err = json.error as Record<string, unknown>;
    expect(typeof err.code, where).toBe("string");
    expect(err.request_id, where).toBe(requestId);
  }
  expect(status, where).toBeGreaterThanOrEqual(400);
}

describe("the compatible APIs and /mcp under random input", () => {
  it("answer in their clients' error shapes with the request id, never with an undocumented 5xx, and refusals cost nothing", async () => {
    const reached = new Set<string>();
    for (const route of COMPAT) {
      const bodies = route.shape === "mcp"
        ? fc.oneof({ weight: 4, arbitrary: mcpMessage.map((m) => JSON.stringify(m)) }, { weight: 1, arbitrary: bodyFor("/none", route.fields) })
        : fc.oneof(
          { weight: 3, arbitrary: fc.constant(JSON.stringify(route.base())) },
          { weight: 6, arbitrary: (route.fields.length ? fc.dictionary(fc.constantFrom(...route.fields), fieldValue, { maxKeys: 2 }) : fc.constant({})).map((o) => JSON.stringify({ ...route.base(), ...o })) },
          { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((j) => JSON.stringify(j)) },
          { weight: 1, arbitrary: fc.string({ maxLength: 80 }) },
        );
      await fc.assert(
        fc.asyncProperty(bodies, authHeader(), contentType, pathParam, async (body, auth, type, param) => {
          const id = param === "@fresh" ? crypto.randomUUID() : param === "@job" ? await jobOf(route.path.includes("/batch/") ? "/v1/batch/scrape/{id}" : "/v1/crawl/{id}") : param;
          const path = route.path.replace("{id}", encodeURIComponent(id) || "x");
          const headers: Record<string, string> = { accept: "application/json, text/event-stream" };
          const authorization = auth();
          if (authorization !== undefined) headers.authorization = authorization;
          if (type) headers["content-type"] = type;
          const before = await Promise.all([syncUsedOf(full), syncUsedOf(narrow)]);
          const started = Date.now();
          const res = await t.request(path, { method: route.method, headers, ...(route.method === "GET" || route.method === "DELETE" ? {} : { body }) });
          const text = await res.text();
          const where = `${route.method} ${path} ${body.slice(0, 120)} → ${res.status} ${text.slice(0, 200)}`;
          if (res.status < 400) reached.add(route.path);
          expect(Date.now() - started, where).toBeLessThan(20_000);
          expect(res.status < 500 || UPSTREAM_FAILURES.has(res.status), where).toBe(true);
          expect(res.headers.get("x-request-id"), where).toMatch(REQUEST_ID);
          if (res.status >= 400) {
            errorShape(route.shape, res.status, JSON.parse(text), res.headers.get("x-request-id"), where);
            if (res.status < 500) expect(await Promise.all([syncUsedOf(full), syncUsedOf(narrow)]), where).toEqual(before);
          }
        }),
        { numRuns: RUNS, interruptAfterTimeLimit: 60_000 },
      );
    }
    for (const route of COMPAT.filter((r) => !r.path.includes("{id}"))) expect(reached, `${route.path} was never answered`).toContain(route.path);
  }, 600_000);
});
