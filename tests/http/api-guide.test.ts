/**
 * The reference the server serves (/openapi.json, drawn by /docs) tells a new API user how to
 * use it, not only the shape of each operation: how to authenticate, which scope each kind of
 * operation needs, this server's plans (from its own QUARRY_PLANS), what counts toward the
 * per-minute limit and the monthly quota, the headers and the error body. Before, its whole
 * description was one sentence. Checked against what the same real server then does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

describe("the served API reference explains keys, plans and limits", () => {
  let server: Server;
  let env: Record<string, string>;
  let guide: string;
  beforeAll(async () => {
    env = {
      QUARRY_DATA_DIR: tempDataDir(),
      QUARRY_IP_RATE: "500/900",
      QUARRY_PLANS: JSON.stringify({ free: { quota: 4, per_minute: 2 }, team: { quota: 250, per_minute: 11 } }),
    };
    server = await startServer("node", env);
    guide = (await (await fetch(`${server.url}/openapi.json`)).json()).info.description;
  }, 60_000);
  afterAll(() => server?.stop());

  /** The plans table rows: `| id | quota | per minute | …the job columns |`. */
  const planRows = () =>
    Object.fromEntries([...guide.matchAll(/^\| `([a-z0-9_-]+)` \| ([^|]+) \| ([^|]+) \|.*$/gm)].map((m) => [m[1], { quota: m[2]!.trim(), perMinute: m[3]!.trim() }]));

  it("lists this server's plans as QUARRY_PLANS makes them, and a key on each is served those figures", async () => {
    const rows = planRows();
    expect(Object.keys(rows).sort()).toEqual(["enterprise", "free", "pro", "starter", "team"]);
    for (const plan of ["free", "team", "enterprise"]) {
      const { key } = createKeyCli(env, `acct-${plan}`, "search", plan === "free" ? undefined : plan);
      const usage = await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json();
      expect(rows[plan], plan).toEqual({
        quota: usage.quota === null ? "unlimited" : usage.quota.toLocaleString("en-US"),
        perMinute: usage.per_minute_limit.toLocaleString("en-US"),
      });
    }
  });

  it("says how to authenticate, the scopes, what counts, the headers, the error body and this server's per-address limit", () => {
    for (const phrase of [
      "Authorization: Bearer qry_",
      "`search`", "`research`", "`scrape`", "`keys`", "insufficient_scope",
      "rate_limited", "quota_exceeded", "Retry-After",
      "X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
      '{"error": {"code", "message", "request_id"}}',
      "500 requests a second (bursts of 900)",
    ]) expect(guide, phrase).toContain(phrase);
  });

  it("every operation it lists under a scope refuses a key without that scope, and the list covers every operation that needs one", async () => {
    const said = Object.fromEntries([...guide.matchAll(/^- `([a-z]+)`: (.+)$/gm)].map((m) => [m[1]!, m[2]!.split(", ")]));
    expect(Object.keys(said).sort()).toEqual(["keys", "research", "scrape", "search"]);
    const doc = await (await fetch(`${server.url}/openapi.json`)).json();
    const scoped = Object.entries(doc.paths as Record<string, Record<string, { "x-quarry-scope"?: string }>>).flatMap(([path, ops]) =>
      Object.entries(ops).filter(([, op]) => op["x-quarry-scope"]).map(([method]) => `${method.toUpperCase()} ${path}`));
    expect(Object.values(said).flat().sort()).toEqual(scoped.sort());
    for (const [scope, operations] of Object.entries(said)) {
      const others = ["search", "research", "scrape", "keys"].filter((s) => s !== scope).join(",");
      const { key } = createKeyCli(env, `without-${scope}`, others, "team");
      for (const operation of operations) {
        const [method, path] = operation.split(" ");
        const res = await fetch(`${server.url}${path!.replace(/\{[a-z_]+\}/g, "x_1")}`, { method, headers: { authorization: `Bearer ${key}` } });
        expect([res.status, (await res.json()).error?.code], operation).toEqual([403, "insufficient_scope"]);
      }
    }
  });
});
