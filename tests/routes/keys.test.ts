import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeApp, type TestApp } from "../helpers/app.ts";

describe.each(["memory", "sqlite"] as const)("key endpoints (%s)", (storage) => {
  let t: TestApp;
  let admin: string;
  beforeEach(async () => {
    t = await makeApp({ storage });
    admin = (await t.key("acme", ["search", "keys"])).secret;
  });
  afterEach(() => t.close());

  it("POST creates a key (201) whose secret is shown once and works at once", async () => {
    const res = await t.request("/v1/keys", { method: "POST", key: admin, json: { name: "ci bot", scopes: ["search"] } });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(body).toMatchObject({ name: "ci bot", scopes: ["search"], last_used_at: null });
    expect(body.id).toMatch(/^key_[0-9A-Z]{26}$/);
    expect(body.key).toMatch(/^qry_[0-9a-f]{64}$/);
    expect(body.prefix).toBe(`qry_${body.key.slice(4, 8)}...${body.key.slice(-4)}`);
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const used = await t.request("/v1/usage", { key: body.key });
    expect(used.status).toBe(200);
    const list = await (await t.request("/v1/keys", { key: admin })).text();
    expect(list).not.toContain(body.key);
    expect(list).not.toContain(body.key.slice(8, -4));
    expect(JSON.parse(list).keys.find((k: { id: string }) => k.id === body.id).prefix).toBe(body.prefix);
  });

  it("GET lists the account's active keys newest first with last_used_at", async () => {
    await t.clock.advance(1000);
    const second = await (await t.request("/v1/keys", { method: "POST", key: admin, json: { name: "second", scopes: ["search"] } })).json();
    await t.request("/v1/usage", { key: second.key });
    await t.drain();
    await t.key("other-co", ["keys"]);
    const { keys } = await (await t.request("/v1/keys", { key: admin })).json();
    expect(keys.map((k: { name: string }) => k.name)).toEqual(["second", "acme-key"]);
    expect(keys[0].last_used_at).toBe("2026-11-22T12:00:01Z");
    expect(Object.keys(keys[0]).sort()).toEqual(["created_at", "id", "last_used_at", "name", "prefix", "scopes"]);
  });

  it("refuses escalation: a key cannot grant a scope it lacks", async () => {
    const res = await t.request("/v1/keys", { method: "POST", key: admin, json: { name: "x", scopes: ["search", "scrape"] } });
    expect(res.status).toBe(403);
    const body = await res.json();
    expect(body.error.code).toBe("insufficient_scope");
    expect(body.error.message).toContain("scrape");
  });

  it.each([
    [{ name: "", scopes: ["search"] }, "name"],
    [{ name: "   ", scopes: ["search"] }, "name"],
    [{ name: "x".repeat(101), scopes: ["search"] }, "name"],
    [{ name: 5, scopes: ["search"] }, "name"],
    [{ name: "x", scopes: [] }, "scopes"],
    [{ name: "x", scopes: ["admin"] }, "scopes.0"],
    [{ name: "x", scopes: "search" }, "scopes"],
    [{ name: "x" }, "scopes"],
    [{ name: "x", scopes: ["search"], plan: "pro" }, "plan"],
  ])("POST %o → 400 naming %s", async (json, field) => {
    const res = await t.request("/v1/keys", { method: "POST", key: admin, json });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it("DELETE revokes (200); the key fails with 401 invalid_key on its very next request", async () => {
    const victim = await (await t.request("/v1/keys", { method: "POST", key: admin, json: { name: "old", scopes: ["search"] } })).json();
    expect((await t.request("/v1/usage", { key: victim.key })).status).toBe(200);
    const res = await t.request(`/v1/keys/${victim.id}`, { method: "DELETE", key: admin });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: victim.id, revoked: true, revoked_at: "2026-11-22T12:00:00Z" });
    const after = await t.request("/v1/usage", { key: victim.key });
    expect(after.status).toBe(401);
    expect((await after.json()).error.code).toBe("invalid_key");
    const { keys } = await (await t.request("/v1/keys", { key: admin })).json();
    expect(keys.map((k: { id: string }) => k.id)).not.toContain(victim.id);
  });

  it("DELETE of another account's key, an unknown or a revoked key is the same 404, and changes nothing", async () => {
    const other = await t.key("other-co", ["search", "keys"]);
    const res = await t.request(`/v1/keys/${other.id}`, { method: "DELETE", key: admin });
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe("not_found");
    expect((await t.request("/v1/usage", { key: other.secret })).status).toBe(200);
    const unknown = await t.request("/v1/keys/key_01M80PV8HSHJYE6R796TQJ2580", { method: "DELETE", key: admin });
    const garbage = await t.request("/v1/keys/../../etc", { method: "DELETE", key: admin });
    expect(unknown.status).toBe(404);
    expect([404, 405]).toContain(garbage.status);
    const mine = await (await t.request("/v1/keys", { method: "POST", key: admin, json: { name: "m", scopes: ["search"] } })).json();
    expect((await t.request(`/v1/keys/${mine.id}`, { method: "DELETE", key: admin })).status).toBe(200);
    const again = await t.request(`/v1/keys/${mine.id}`, { method: "DELETE", key: admin });
    expect(again.status).toBe(404);
    const otherMsg = (await (await t.request(`/v1/keys/${other.id}`, { method: "DELETE", key: admin })).json()).error.message;
    expect(otherMsg.replace(other.id, "ID")).toBe((await again.json()).error.message.replace(mine.id, "ID"));
  });

  it("a lesser key neither sees nor revokes a stronger key of its account (same 404 as a key that does not exist)", async () => {
    // admin holds search,keys; the operator's full-scope key is stronger.
    const full = await t.key("acme", ["search", "research", "scrape", "keys"]);
    const peer = await (await t.request("/v1/keys", { method: "POST", key: admin, json: { name: "peer", scopes: ["keys", "search"] } })).json();
    const lesser = await (await t.request("/v1/keys", { method: "POST", key: admin, json: { name: "lesser", scopes: ["search"] } })).json();

    const listed = (await (await t.request("/v1/keys", { key: admin })).json()).keys.map((k: { id: string }) => k.id);
    expect(listed).toContain(peer.id);
    expect(listed).toContain(lesser.id);
    expect(listed).not.toContain(full.id);

    const res = await t.request(`/v1/keys/${full.id}`, { method: "DELETE", key: admin });
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(body.error.code).toBe("not_found");
    const unknown = await (await t.request("/v1/keys/key_01M80PV8HSHJYE6R796TQJ2580", { method: "DELETE", key: admin })).json();
    expect(body.error.message.replace(full.id, "ID")).toBe(unknown.error.message.replace("key_01M80PV8HSHJYE6R796TQJ2580", "ID"));
    // The stronger key still works and still sees everything, including the lesser keys.
    const fullList = await t.request("/v1/keys", { key: full.secret });
    expect(fullList.status).toBe(200);
    expect((await fullList.json()).keys.map((k: { id: string }) => k.id)).toEqual(expect.arrayContaining([full.id, peer.id, lesser.id]));

    // Equal scopes (in another order) and fewer scopes may be revoked; the stronger key may revoke the lesser.
    expect((await t.request(`/v1/keys/${peer.id}`, { method: "DELETE", key: admin })).status).toBe(200);
    expect((await t.request(`/v1/keys/${lesser.id}`, { method: "DELETE", key: admin })).status).toBe(200);
    const weaker = await t.key("acme", ["search", "keys"]);
    expect((await t.request(`/v1/keys/${weaker.id}`, { method: "DELETE", key: full.secret })).status).toBe(200);
  });

  it("a key may revoke itself (rotation's last step)", async () => {
    const self = await t.key("acme", ["keys"]);
    expect((await t.request(`/v1/keys/${self.id}`, { method: "DELETE", key: self.secret })).status).toBe(200);
    expect((await t.request("/v1/keys", { key: self.secret })).status).toBe(401);
  });

  it("no secret ever reaches a log line", async () => {
    const created = await (await t.request("/v1/keys", { method: "POST", key: admin, json: { name: "n", scopes: ["search"] } })).json();
    await t.request("/v1/usage", { key: created.key });
    await t.request("/v1/usage", { headers: { authorization: `Bearer ${created.key}x` } });
    const log = t.logger.text();
    expect(t.logger.lines.length).toBeGreaterThan(2);
    for (const secret of [admin, created.key]) {
      expect(log).not.toContain(secret);
      expect(log).not.toContain(secret.slice(4));
    }
  });
});
