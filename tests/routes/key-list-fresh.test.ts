/**
 * GET /v1/keys keeps an account's key records between requests while the key store's change mark
 * stays the same (issue #33). What a user depends on: a key created or revoked anywhere (this
 * server, or the operator's CLI on its own connection to the SQLite file) shows in the very next
 * list, and a key revoked by the CLI fails on its next request. Real SQLite, two connections.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQuarry, type Quarry } from "../../core/app.ts";
import { parseConfig } from "../../core/config.ts";
import { buildPorts, type Built } from "../../adapters/shared/bootstrap.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { cli as runCli, createKeyCli } from "../helpers/server.ts";

let dir: string;
let server: Built;
let env: Record<string, string>;
let quarry: Quarry;
let admin: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "quarry-keylist-"));
  env = { QUARRY_DATA_DIR: dir, QUARRY_IP_RATE: "off" };
  const config = parseConfig(env, "test");
  admin = createKeyCli(env, "acme", "search,keys").key;
  server = await buildPorts(config, nodeRuntime, new MemoryLogger());
  quarry = createQuarry(server.ports, config);
});

/** The operator's CLI, a process of its own on the same SQLite file. */
function cliKey(name: string): { id: string; key: string } {
  const r = runCli(["keys", "create", "--account", "acme", "--scopes", "search", "--name", name, "--json"], env);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}
function cliRevoke(id: string): void {
  const r = runCli(["keys", "revoke", id], env);
  expect(r.status, r.stderr).toBe(0);
}

afterAll(async () => {
  await quarry?.stop();
  await quarry?.drain();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (key: string, path: string, init: RequestInit = {}) =>
  quarry.app.fetch(new Request(`http://127.0.0.1${path}`, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } }));
const names = async () => {
  const res = await call(admin, "/v1/keys");
  expect(res.status).toBe(200);
  return ((await res.json()) as { keys: Array<{ name: string }> }).keys.map((k) => k.name).sort();
};

describe("GET /v1/keys between changes", () => {
  it("lists a key the CLI created and drops one it revoked on the very next request", async () => {
    expect(await names()).toEqual(["acme-search,keys"]);
    expect(await names()).toEqual(["acme-search,keys"]);
    const made = cliKey("from-cli");
    expect(await names()).toEqual(["acme-search,keys", "from-cli"]);
    expect((await call(made.key, "/v1/usage")).status).toBe(200);
    cliRevoke(made.id);
    expect(await names()).toEqual(["acme-search,keys"]);
    expect((await call(made.key, "/v1/usage")).status).toBe(401);
  });

  it("lists a key this server created and drops one it revoked on the very next request", async () => {
    const res = await call(admin, "/v1/keys", { method: "POST", body: JSON.stringify({ name: "via-api", scopes: ["search"] }) });
    expect(res.status).toBe(201);
    const made = (await res.json()) as { id: string; key: string };
    expect(await names()).toEqual(["acme-search,keys", "via-api"]);
    expect((await call(admin, `/v1/keys/${made.id}`, { method: "DELETE" })).status).toBe(200);
    expect(await names()).toEqual(["acme-search,keys"]);
    expect((await call(made.key, "/v1/usage")).status).toBe(401);
  });

  it("lists a key created through the API while lists were being answered", async () => {
    // Lists read during the write may miss the key; none kept from then hides it afterwards.
    const during = Promise.all(Array.from({ length: 20 }, () => names()));
    const res = await call(admin, "/v1/keys", { method: "POST", body: JSON.stringify({ name: "racing", scopes: ["search"] }) });
    expect(res.status).toBe(201);
    await during;
    expect(await names()).toEqual(["acme-search,keys", "racing"]);
  });
});
