/**
 * The real `@tavily/core` client, unchanged, against a real Quarry server over HTTP
 * (`apiBaseURL` = `{server}/compat/tavily`): search, extract, research; refusals as the
 * client's own errors; usage counted as the native calls count it.
 */
import { tavily, TavilyKeylessLimitError } from "@tavily/core";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SearchBody } from "../../core/operations/search/schema.ts";
import { errorOf, QUESTION, startHarness, type Harness } from "./harness.ts";

let h: Harness;
const client = (apiKey: string) => tavily({ apiKey, apiBaseURL: `${h.url}/compat/tavily` });
const NATIVE_SEARCH = new Set(Object.keys(SearchBody.entries));

beforeAll(async () => {
  h = await startHarness();
  await h.exhaust();
}, 90_000);
afterAll(async () => h?.close());

describe("@tavily/core against /compat/tavily", () => {
  it("search: results the client reads, raw content of every page, domain filters, the answer or its honest absence", async () => {
    const res = await client(h.keys.full).search(QUESTION, { includeAnswer: true, includeRawContent: "markdown", includeDomains: ["127.0.0.1"], maxResults: 5 });
    expect(res.query).toBe(QUESTION);
    expect(typeof res.responseTime).toBe("number");
    expect(res.requestId).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(Array.isArray(res.images)).toBe(true);
    expect(res.results.length).toBe(5);
    for (const r of res.results) {
      expect(new URL(r.url).hostname).toBe("127.0.0.1");
      expect(r.title.length).toBeGreaterThan(0);
      expect(r.content.length).toBeGreaterThan(0);
      expect(r.score).toBeGreaterThan(0);
      expect(r.score).toBeLessThanOrEqual(1);
      // the whole article, read from the local page
      expect(typeof r.rawContent).toBe("string");
      expect(r.rawContent!.length).toBeGreaterThan(500);
    }
    const served = new Map(h.served.map((s) => [s.url, s]));
    for (const r of res.results) expect(r.rawContent).toContain(served.get(r.url)!.text.split(/(?<=[.!?])\s+/)[1]!.slice(0, 40));
    if (NATIVE_SEARCH.has("include_answer")) {
      expect(typeof res.answer).toBe("string");
      expect(res.answer!).toMatch(/\[\d+\]/);
    } else {
      expect(res.answer).toBeNull();
    }
    // Without the filter, the other site's result is there too: the filter did the work.
    const unfiltered = await client(h.keys.full).search(QUESTION, { maxResults: 10 });
    expect(unfiltered.results.map((r) => new URL(r.url).hostname)).toContain("example.org");
    expect(unfiltered.results.every((r) => r.rawContent === null)).toBe(true);
    const excluded = await client(h.keys.full).search(QUESTION, { maxResults: 10, excludeDomains: ["example.org"] });
    expect(excluded.results.map((r) => new URL(r.url).hostname)).not.toContain("example.org");
  }, 60_000);

  it("search: chunks, favicons, images and dates pass through to native search under their own names", async () => {
    const res = await client(h.keys.full).search(QUESTION, { searchDepth: "advanced", chunksPerSource: 3, includeFavicon: true, includeImages: true, includeDomains: ["127.0.0.1"], maxResults: 3 });
    expect(res.results.length).toBe(3);
    for (const r of res.results) {
      expect("favicon" in r).toBe(true);
      // three passages of the page, joined the way Tavily joins chunks
      expect(r.content.split(" [...] ").length).toBe(3);
    }
    expect(Array.isArray(res.images)).toBe(true);
    const dated = await fetch(`${h.url}/compat/tavily/search`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${h.keys.full}` },
      body: JSON.stringify({ query: QUESTION, start_date: "2001-01-01", end_date: "2001-01-02" }),
    }).then((r) => r.json());
    expect(dated.quarry.meta.date_filter).toMatchObject({ start_date: "2001-01-01", end_date: "2001-01-02" });
  }, 60_000);

  it("search: an option Quarry cannot honour is accepted and named, never dropped silently", async () => {
    const raw = await fetch(`${h.url}/compat/tavily/search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: QUESTION, api_key: h.keys.full, auto_parameters: true, include_image_descriptions: true, exact_match: true, topic: "finance" }),
    });
    expect(raw.status).toBe(200);
    const body = await raw.json();
    const names = (body.quarry.ignored as Array<{ option: string; reason: string }>).map((i) => i.option);
    expect(names).toEqual(expect.arrayContaining(["auto_parameters", "exact_match", "topic"]));
    for (const i of body.quarry.ignored) expect(i.reason.length).toBeGreaterThan(10);
    expect(body.images).toEqual([]);
  }, 30_000);

  it("extract: pages as raw content, a failing URL in failedResults", async () => {
    const good = `${h.site.url}/article`;
    const missing = `${h.site.url}/missing`;
    const res = await client(h.keys.full).extract([good, missing, "file:///etc/passwd"], { format: "markdown" });
    expect(res.results.map((r) => r.url)).toEqual([good]);
    expect(res.results[0]!.rawContent).toContain("Log-structured merge trees write sorted runs");
    expect(res.results[0]!.rawContent).not.toContain("Home");
    expect(res.failedResults.map((f) => f.url).sort()).toEqual([missing, "file:///etc/passwd"].sort());
    for (const f of res.failedResults) expect(f.error.length).toBeGreaterThan(0);
    expect(res.requestId).toMatch(/^req_/);
    const text = await client(h.keys.full).extract([good], { format: "text" });
    expect(text.results[0]!.rawContent).not.toContain("# Compaction");
  }, 30_000);

  it("research: a task that starts at once and is read back by its id, with numbered citations", async () => {
    const started = (await client(h.keys.full).research(QUESTION, { model: "mini" })) as { requestId: string; status: string; input: string };
    expect(started.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(started.status).toBe("pending");
    expect(started.input).toBe(QUESTION);
    let done: Record<string, unknown> = {};
    for (let i = 0; i < 120; i++) {
      done = (await client(h.keys.full).getResearch(started.requestId)) as unknown as Record<string, unknown>;
      if (done.status === "completed" || done.status === "failed") break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(done.status).toBe("completed");
    expect(done.request_id).toBe(started.requestId);
    const sources = done.sources as Array<{ title: string; url: string }>;
    expect(sources.length).toBeGreaterThan(2);
    const content = done.content as string;
    expect(content).toMatch(/\[\d+\]/);
    for (const [, n] of content.matchAll(/\[(\d+)\]/g)) expect(Number(n)).toBeLessThanOrEqual(sources.length);
    // another account's key cannot read it
    await expect(client(h.keys.twin).getResearch(started.requestId)).rejects.toThrow(/No research task/);
  }, 60_000);

  it("a bad key, a missing scope and an exhausted quota reach the client as its own errors, with Tavily's status codes", async () => {
    const bad = await errorOf(client(`qry_${"0".repeat(64)}`).search(QUESTION));
    expect(bad).toBeInstanceOf(Error);
    expect(bad).not.toBeInstanceOf(TavilyKeylessLimitError);
    expect(bad.message).toMatch(/key/i);
    const scope = await errorOf(client(h.keys.narrow).extract([`${h.site.url}/article`]));
    expect(scope.message).toContain('"scrape" scope');
    const quota = await errorOf(client(h.keys.tight).search(QUESTION));
    expect(quota.message).toMatch(/quota/i);
    const research = await errorOf(client(h.keys.narrow).research(QUESTION));
    expect(research.message).toContain('"research" scope');
    const statuses = await Promise.all([
      [`qry_${"0".repeat(64)}`, "search", { query: QUESTION }],
      [h.keys.narrow, "extract", { urls: [`${h.site.url}/article`] }],
      [h.keys.tight, "search", { query: QUESTION }],
      [h.keys.full, "search", { query: "" }],
    ].map(async ([key, path, body]) => {
      const res = await fetch(`${h.url}/compat/tavily/${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
      const json = await res.json();
      expect(typeof json.detail.error).toBe("string");
      expect(json.detail.request_id).toBe(res.headers.get("x-request-id"));
      expect(json.error).toBeUndefined();
      return res.status;
    }));
    expect(statuses).toEqual([401, 403, 432, 400]);
  }, 30_000);

  it("counts usage exactly as the same native calls do", async () => {
    const before = await h.usage(h.keys.full);
    const twinBefore = await h.usage(h.keys.twin);
    await client(h.keys.full).search(QUESTION, { maxResults: 3 });
    await client(h.keys.full).extract([`${h.site.url}/article`, `${h.site.url}/other`]);
    await client(h.keys.full).extract(["file:///etc/passwd"]);
    const post = (path: string, body: unknown) => fetch(h.url + path, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${h.keys.twin}` }, body: JSON.stringify(body) }).then((r) => r.text());
    await post("/v1/search", { query: QUESTION, max_results: 3 });
    await post("/v1/scrape", { url: `${h.site.url}/article` });
    await post("/v1/scrape", { url: `${h.site.url}/other` });
    await post("/v1/scrape", { url: "file:///etc/passwd" });
    const after = await h.usage(h.keys.full);
    const twinAfter = await h.usage(h.keys.twin);
    const delta = (a: Record<string, number>, b: Record<string, number>) => Object.fromEntries(Object.keys(a).map((k) => [k, a[k]! - (b[k] ?? 0)]));
    expect(delta(after.endpoints, before.endpoints)).toEqual(delta(twinAfter.endpoints, twinBefore.endpoints));
    expect(after.used - before.used).toBe(3);
    const usage = await fetch(`${h.url}/compat/tavily/usage`, { headers: { authorization: `Bearer ${h.keys.full}` } }).then((r) => r.json());
    expect(usage.key.usage).toBe(after.used);
    expect(usage.key.search_usage).toBe(after.endpoints.search);
    expect(usage.key.extract_usage).toBe(after.endpoints.scrape);
  }, 60_000);
});

describe("tavily-python's requests (recorded: the package cannot be installed here)", () => {
  const recorded = JSON.parse(readFileSync(new URL("../fixtures/compat/tavily-python-requests.json", import.meta.url), "utf8")) as {
    headers: Record<string, string>;
    requests: Record<string, { method: string; path: string; body?: unknown }>;
  };
  const fill = (s: string, vars: Record<string, string>) => s.replace(/\{(\w+)\}/g, (m, k: string) => vars[k] ?? m);
  async function send(name: string, key: string, vars: Record<string, string> = {}) {
    const r = recorded.requests[name]!;
    const all = { key, question: QUESTION, page: `${h.site.url}/article`, missing: `${h.site.url}/missing`, ...vars };
    const headers = Object.fromEntries(Object.entries(recorded.headers).map(([k, val]) => [k, fill(val, all)]));
    const body = r.body === undefined ? undefined : fill(JSON.stringify(r.body), all);
    const res = await fetch(`${h.url}/compat/tavily${fill(r.path, all)}`, { method: r.method, headers, ...(body ? { body } : {}) });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  it("answer with the status and fields the Python client reads", async () => {
    const search = await send("search", h.keys.full);
    expect(search.status).toBe(200);
    expect((search.json.results as unknown[]).length).toBe(3);
    for (const r of search.json.results as Array<Record<string, unknown>>) expect(typeof r.raw_content).toBe("string");
    expect("answer" in search.json).toBe(true);
    const extract = await send("extract", h.keys.full);
    expect(extract.status).toBe(200);
    expect((extract.json.results as unknown[]).length).toBe(1);
    expect((extract.json.failed_results as Array<{ url: string }>)[0]!.url).toBe(`${h.site.url}/missing`);
    const research = await send("research", h.keys.full);
    expect(research.status).toBe(200); // not 201: the Python client takes only 200 for success
    expect(research.json).toMatchObject({ status: "pending", input: QUESTION });
    const polled = await send("get_research", h.keys.full, { request_id: research.json.request_id as string });
    expect([200, 202]).toContain(polled.status);
    expect(polled.json.request_id).toBe(research.json.request_id);
  }, 60_000);

  it("refuse with the statuses that map to its exception classes, and detail.error as the message", async () => {
    const cases: Array<[string, string, number]> = [
      ["search", `qry_${"0".repeat(64)}`, 401], // InvalidAPIKeyError
      ["extract", h.keys.narrow, 403], // ForbiddenError
      ["search", h.keys.tight, 432], // ForbiddenError (Tavily's plan-limit status)
    ];
    for (const [name, key, status] of cases) {
      const res = await send(name, key);
      expect(res.status).toBe(status);
      expect(typeof (res.json.detail as { error: unknown }).error).toBe("string");
    }
  }, 30_000);

  it("a body key with characters no header can carry is a wrong key (401) on every route, never a 500", async () => {
    const bodies: Record<string, Record<string, unknown>> = {
      search: { query: QUESTION },
      extract: { urls: [`${h.site.url}/article`] },
      research: { input: QUESTION },
      map: { url: h.site.url },
      crawl: { url: h.site.url },
    };
    for (const key of ["Ā", `${h.keys.full}\u{1F511}`, "\uD800", "qry_\u00e9"]) {
      for (const [path, body] of Object.entries(bodies)) {
        const res = await fetch(`${h.url}/compat/tavily/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...body, api_key: key }) });
        expect(res.status, `${path} with ${JSON.stringify(key)}`).toBe(401);
        expect(typeof ((await res.json()) as { detail: { error: unknown } }).detail.error).toBe("string");
      }
    }
  }, 30_000);
});
