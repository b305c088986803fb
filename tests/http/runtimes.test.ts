/**
 * The same black-box HTTP suite against real server processes on Node, Deno and Bun, each
 * on its own SQLite file, with keys made by the real CLI.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, tempDataDir, type Runtime, type Server } from "../helpers/server.ts";

const RUNTIMES: Runtime[] = ["node", "deno", "bun"];

describe.each(RUNTIMES)("HTTP on %s", (runtime) => {
  let s: Server;
  let env: Record<string, string>;
  let admin: { id: string; key: string };
  let filler: { id: string; key: string };
  beforeAll(async () => {
    env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_IP_RATE: "off", QUARRY_METRICS: "true" };
    admin = createKeyCli(env, "acme", "search,keys");
    filler = createKeyCli(env, "acme", "scrape,search");
    s = await startServer(runtime, env);
  }, 60_000);
  afterAll(async () => {
    const code = await s?.stop();
    expect(code).toBe(0);
    expect(s.output()).toContain("quarry stopped");
  });

  const call = (path: string, init: RequestInit & { key?: string } = {}) => {
    const headers = new Headers(init.headers);
    if (init.key) headers.set("authorization", `Bearer ${init.key}`);
    return fetch(s.url + path, { ...init, headers });
  };

  it("serves /health with the rate headers and a request id", async () => {
    const res = await call("/health");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.status).toBe("ok");
    expect(body.services.database.status).toBe("ok");
    expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
    expect(res.headers.get("x-ratelimit-reset")).toMatch(/^\d{4}-\d\d-01T00:00:00Z$/);
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9A-Z]{26}$/);
  });

  it("HEAD carries the request id and rate headers a GET would", async () => {
    const cases: Array<[string, string | undefined, number]> = [["/health", undefined, 200], ["/v1/usage", undefined, 401], ["/v1/usage", admin.key, 200], ["/openapi.json", undefined, 200], ["/v1/nope", undefined, 404]];
    for (const [path, key, status] of cases) {
      const head = await call(path, { method: "HEAD", key });
      const get = await call(path, { key });
      expect(head.status, `HEAD ${path}`).toBe(status);
      expect(head.headers.get("x-request-id"), `HEAD ${path}`).toMatch(/^req_[0-9A-Z]{26}$/);
      for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "content-type"]) {
        expect(head.headers.get(h), `HEAD ${path} ${h}`).toBe(get.headers.get(h));
      }
      expect(await head.text()).toBe("");
      await get.body?.cancel();
    }
  });

  it("keeps a collection in its SQLite file (FTS5) and searches it with cited passages", async () => {
    const json = (body: unknown) => ({ method: "POST", key: filler.key, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await call("/v1/collections", json({ name: "notes" }))).status).toBe(201);
    const docs = [
      { id: "ops", title: "Operations", markdown: "# Backups\n\nThe database is copied to cold storage every night at two o'clock." },
      { id: "hr", title: "Holidays", markdown: "# Leave\n\nEach employee has twenty-five days of paid leave a year." },
    ];
    const added = await (await call("/v1/collections/notes/documents", json({ documents: docs }))).json();
    expect(added).toEqual({ collection: "notes", added: ["ops", "hr"], replaced: [], unchanged: [] });
    const found = await (await call("/v1/collections/notes/search", json({ query: "when are backups copied?" }))).json();
    expect(found.results[0]).toMatchObject({ id: "ops", title: "Operations" });
    expect(found.results[0].passages[0]).toMatchObject({ heading: "Backups" });
    expect(found.results[0].passages[0].text).toMatch(/cold storage/);
    expect(found.results.map((r: { id: string }) => r.id)).not.toContain("hr");
  });

  it("accepts a CLI-made key and runs the key lifecycle", async () => {
    const created = await call("/v1/keys", { method: "POST", key: admin.key, headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "rotated", scopes: ["search"] }) });
    expect(created.status).toBe(201);
    const fresh = await created.json();
    expect((await call("/v1/usage", { key: fresh.key })).status).toBe(200);
    const list = await (await call("/v1/keys", { key: admin.key })).json();
    expect(list.keys.map((k: { id: string }) => k.id)).toEqual([fresh.id, admin.id]);
    const del = await call(`/v1/keys/${fresh.id}`, { method: "DELETE", key: admin.key });
    expect(del.status).toBe(200);
    const after = await call("/v1/usage", { key: fresh.key });
    expect(after.status).toBe(401);
    expect((await after.json()).error.code).toBe("invalid_key");
  });

  it("serves Prometheus metrics of its own traffic (prom-client on this runtime)", async () => {
    expect((await call("/health")).status).toBe(200);
    const res = await call("/metrics");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/^quarry_http_requests_total\{[^}]*route="\/health"[^}]*status="200"[^}]*\} [1-9]/m);
    expect(text).toContain("quarry_http_request_duration_seconds_bucket");
  });

  it("answers bad input with its error, never a 500", async () => {
    const json = { "content-type": "application/json" };
    const cases: Array<[string, RequestInit & { key?: string }, number, string]> = [
      ["/v1/keys", { method: "POST", key: admin.key, headers: json, body: "{oops" }, 400, "invalid_request"],
      ["/v1/keys", { method: "POST", key: admin.key, headers: { "content-type": "text/plain" }, body: "{}" }, 415, "unsupported_media_type"],
      ["/v1/keys", { method: "POST", key: admin.key, headers: json, body: "x".repeat(70_000) }, 413, "payload_too_large"],
      ["/v1/nope", { key: admin.key }, 404, "not_found"],
      ["/v1/usage", { method: "DELETE", key: admin.key }, 405, "method_not_allowed"],
      ["/v1/usage", {}, 401, "missing_auth"],
      ["/v1/usage", { headers: { authorization: "Bearer nope" } }, 401, "invalid_auth"],
    ];
    for (const [path, init, status, code] of cases) {
      const res = await call(path, init);
      expect(res.status, `${init.method ?? "GET"} ${path}`).toBe(status);
      const body = await res.json();
      expect(body.error.code).toBe(code);
      expect(res.headers.get("x-request-id")).toBe(body.error.request_id);
    }
  });

  it("500 simultaneous requests on a per-minute limit of 60 admit exactly 60", async () => {
    const k = createKeyCli(env, `burst-${runtime}`, "search");
    const res = await Promise.all(Array.from({ length: 500 }, () => call("/v1/usage", { key: k.key }).then(async (r) => ({ status: r.status, body: await r.text() }))));
    expect(res.filter((r) => r.status === 200)).toHaveLength(60);
    expect(res.filter((r) => r.status === 429)).toHaveLength(440);
    expect(res.every((r) => r.status !== 500)).toBe(true);
  }, 60_000);

  it("serves the compatible APIs and MCP: translated, through the native gateway, in each client's shape", async () => {
    const usage = await call("/compat/tavily/usage", { key: admin.key });
    expect(usage.status).toBe(200);
    expect(typeof (await usage.json()).key.usage).toBe("number");
    // the key lacks the scrape scope: Firecrawl's refusal, with one request id for both layers
    const refused = await call("/compat/firecrawl/v2/scrape", { method: "POST", key: admin.key, headers: { "content-type": "application/json" }, body: JSON.stringify({ url: "https://example.org/" }) });
    expect(refused.status).toBe(403);
    const body = await refused.json();
    expect(body).toMatchObject({ success: false, code: "insufficient_scope" });
    expect(body.request_id).toBe(refused.headers.get("x-request-id"));
    const client = new Client({ name: "runtime-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${admin.key}` } } }));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("search");
    const scrape = await client.callTool({ name: "scrape", arguments: { url: "https://example.org/" } });
    expect(scrape.isError).toBe(true);
    await client.close();
  }, 30_000);

  it("logs one JSON line per request with its id and never the secret", async () => {
    const res = await call("/v1/usage", { key: admin.key });
    const id = res.headers.get("x-request-id")!;
    // The line is written after the answer is sent: wait for it (on a loaded machine 100 ms was not always enough).
    const lineOf = () => s.output().split("\n").find((l) => l.includes(id));
    await expect.poll(lineOf, { timeout: 10_000 }).toBeDefined();
    const line = lineOf();
    expect(JSON.parse(line!)).toMatchObject({ req_id: id, method: "GET", path: "/v1/usage", status: 200 });
    expect(s.output()).not.toContain(admin.key.slice(4));
  });
});
