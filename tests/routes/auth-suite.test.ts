/** The shared suite: every protected route refuses missing, malformed, unknown and revoked keys, and wrong scopes. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQuarry } from "../../core/app.ts";
import { parseConfig } from "../../core/config.ts";
import { memoryPorts } from "../../adapters/shared/bootstrap.ts";
import { makeApp, MemoryLogger, type TestApp } from "../helpers/app.ts";
import { echoOperation } from "../helpers/test-operation.ts";

const routes = createQuarry(memoryPorts(new MemoryLogger()), parseConfig({}), { operations: echoOperation })
  .routes.filter((r) => r.auth)
  .map((r) => ({ ...r, url: r.path.replace(/:[a-z_]+/g, "key_01M80PV8HSHJYE6R796TQJ258M"), label: `${r.method} ${r.path}` }));

describe.each(["memory", "sqlite"] as const)("auth failures on every protected route (%s)", (storage) => {
  let t: TestApp;
  let revoked: string;
  let noScope: string;
  beforeAll(async () => {
    t = await makeApp({ storage, options: { operations: echoOperation } });
    revoked = (await t.key("acme", ["search", "keys", "research", "scrape"])).secret;
    const id = (await t.ports.keys.getKeyByHash(await (await import("../../core/keys/secret.ts")).hashSecret(revoked)))!.id;
    await t.ports.keys.revokeKey(id, "2026-11-22T12:00:00Z");
    noScope = (await t.key("acme", ["scrape"])).secret;
  });
  afterAll(() => t.close());

  it("covers the key, usage and operation routes", () => {
    expect(routes.map((r) => r.label)).toEqual(expect.arrayContaining(["GET /v1/keys", "POST /v1/keys", "DELETE /v1/keys/:key_id", "GET /v1/usage", "POST /v1/test/echo"]));
  });

  const cases: Array<[string, (r: (typeof routes)[number]) => Record<string, string>, number, string]> = [
    ["missing", () => ({}), 401, "missing_auth"],
    ["not Bearer", () => ({ authorization: "Basic dXNlcjpwYXNz" }), 401, "invalid_auth"],
    ["malformed token", () => ({ authorization: "Bearer qry_123" }), 401, "invalid_auth"],
    ["uppercase hex", () => ({ authorization: `Bearer qry_${"A".repeat(64)}` }), 401, "invalid_auth"],
    ["unknown key", () => ({ authorization: `Bearer qry_${"0".repeat(64)}` }), 401, "invalid_key"],
    ["revoked key", () => ({ authorization: `Bearer ${revoked}` }), 401, "invalid_key"],
  ];
  for (const r of routes) {
    for (const [name, headers, status, code] of cases) {
      it(`${r.label}: ${name} → ${status} ${code}`, async () => {
        const res = await t.request(r.url, { method: r.method, headers: headers(r), json: r.body ? { query: "q" } : undefined });
        expect(res.status).toBe(status);
        const body = await res.json();
        expect(body.error.code).toBe(code);
        expect(body.error.request_id).toBe(res.headers.get("x-request-id"));
        expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
        if (code === "invalid_key") expect(body.error.message).toMatch(/not found or has been revoked/);
      });
    }
    if (r.scope && r.scope !== "scrape") {
      it(`${r.label}: key without "${r.scope}" → 403 insufficient_scope`, async () => {
        const res = await t.request(r.url, { method: r.method, key: noScope, json: r.body ? { query: "q" } : undefined });
        expect(res.status).toBe(403);
        expect((await res.json()).error.code).toBe("insufficient_scope");
      });
    }
  }

  it("a flood of one unknown key costs one storage lookup", async () => {
    const store = t.ports.keys;
    let lookups = 0;
    const original = store.getKeyByHash.bind(store);
    store.getKeyByHash = (h) => {
      lookups++;
      return original(h);
    };
    const bad = `qry_${"e".repeat(64)}`;
    const all = await Promise.all(Array.from({ length: 50 }, () => t.request("/v1/usage", { key: bad })));
    await t.request("/v1/usage", { key: bad });
    store.getKeyByHash = original;
    expect(all.every((r) => r.status === 401)).toBe(true);
    expect(lookups).toBe(1);
  });
});
