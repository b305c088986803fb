/**
 * Query parameters of the native API are checked as body fields are: a typo such as `?limt=5`
 * is a 400 naming it, not silently ignored. The compatible APIs still take what SDKs add.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeApp, type TestApp } from "../helpers/app.ts";

describe("unknown query parameters", () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await makeApp();
    key = (await t.key("acme", ["keys", "search", "research", "scrape"])).secret;
  });
  afterAll(() => t.close());

  it("GET /v1/usage?limt=5 → 400 invalid_request naming the parameter, counting nothing", async () => {
    const res = await t.request("/v1/usage?limt=5", { key });
    expect(res.status).toBe(400);
    const err = (await res.json()).error;
    expect(err.code).toBe("invalid_request");
    expect(err.message).toContain('"limt"');
    expect(err.details).toEqual([{ field: "limt", message: "unknown query parameter" }]);
    const usage = await (await t.request("/v1/usage", { key })).json();
    expect(usage.used).toBe(0);
  });

  it("every native route refuses one, before any work (a key is not revoked by DELETE …?x=1)", async () => {
    const doc = await (await t.request("/openapi.json")).json();
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith("/v1/"))
      .flatMap(([path, methods]) => Object.keys(methods).map((m) => [m.toUpperCase(), path.replace(/\{[a-z_]+\}/g, "x")] as const));
    expect(ops.length).toBeGreaterThan(15);
    const own = await t.key("acme", ["keys"]);
    for (const [method, path] of [...ops, ["DELETE", `/v1/keys/${own.id}`] as const]) {
      const res = await t.request(`${path}?limt=5`, { method, key, json: method === "POST" ? { query: "q" } : undefined });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect((await res.json()).error.message, `${method} ${path}`).toContain('"limt"');
    }
    expect((await t.request("/v1/keys", { key: own.secret })).status).toBe(200); // still active
  });

  it("a parameter the route takes is read as before: a job's skip", async () => {
    const res = await t.request("/v1/crawl/crawl_01J00000000000000000000000?skip=100", { key });
    expect(res.status).toBe(404);
    const bad = await t.request("/v1/crawl/crawl_01J00000000000000000000000?skip=-1", { key });
    expect((await bad.json()).error.details).toEqual([{ field: "skip", message: "skip must be a whole number" }]);
    // Given twice, it has no one meaning: a 400 naming it, not whichever comes first.
    const twice = await t.request("/v1/crawl/crawl_01J00000000000000000000000?skip=10&skip=20", { key });
    expect(twice.status).toBe(400);
    expect((await twice.json()).error.details).toEqual([{ field: "skip", message: "given more than once" }]);
    const doc = await (await t.request("/openapi.json")).json();
    expect(doc.paths["/v1/crawl/{id}"].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(["path:id", "query:skip"]);
  });

  it("/health and the compatible APIs still take what probes and SDKs add", async () => {
    expect((await t.request("/health?probe=1")).status).toBe(200);
    expect((await t.request("/compat/tavily/usage?extra=1", { key })).status).toBe(200);
  });
});
