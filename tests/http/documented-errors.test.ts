/**
 * What a client generated from the served /openapi.json expects matches what the server answers:
 * every native route refuses an unknown query parameter with 400 invalid_request, so each one's
 * document lists a 400 (GET /v1/keys, GET /v1/usage, DELETE /v1/keys/{key_id} listed none).
 * Messages that name a route name it as the document does (`/v1/keys/{key_id}`), not in the
 * router's own syntax (`/v1/keys/:key_id`). A real `quarry serve`, keys from the CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

describe("errors the served OpenAPI document lists", () => {
  let server: Server;
  let env: Record<string, string>;
  beforeAll(async () => {
    env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_IP_RATE: "off" };
    server = await startServer("node", env);
  }, 60_000);
  afterAll(() => server?.stop());

  it("every /v1/ operation that answers 400 for an unknown query parameter documents a 400 invalid_request", async () => {
    const admin = createKeyCli(env, "acme", "search,research,scrape,keys");
    const doc = await (await fetch(`${server.url}/openapi.json`)).json();
    const checked: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { description: string }> }>>)) {
      if (!path.startsWith("/v1/")) continue;
      for (const [method, op] of Object.entries(ops)) {
        const url = `${server.url}${path.replace(/\{[a-z_]+\}/g, "x_1")}?limt=5`;
        const res = await fetch(url, { method: method.toUpperCase(), headers: { authorization: `Bearer ${admin.key}` } });
        const body = await res.json();
        expect([res.status, body.error?.code], `${method} ${path}`).toEqual([400, "invalid_request"]);
        expect(body.error.message, `${method} ${path}`).toContain('"limt"');
        expect(op.responses["400"]?.description, `${method} ${path}`).toContain("invalid_request");
        checked.push(`${method} ${path}`);
      }
    }
    expect(checked).toEqual(expect.arrayContaining(["get /v1/keys", "delete /v1/keys/{key_id}", "get /v1/usage", "get /v1/usage/daily"]));
  });

  it("GET /v1/usage/daily's description names every usage group its answer counts", async () => {
    const key = createKeyCli(env, "acme", "search");
    const doc = await (await fetch(`${server.url}/openapi.json`)).json();
    const text: string = doc.paths["/v1/usage/daily"].get.description;
    const daily = await (await fetch(`${server.url}/v1/usage/daily`, { headers: { authorization: `Bearer ${key.key}` } })).json();
    expect(daily.groups).toContain("crawl");
    const named = /usage group \(([^)]*)\)/.exec(text)?.[1].split(", ");
    expect(named).toEqual(daily.groups);
  });

  it("messages name a route with {key_id}, as the document does", async () => {
    const searcher = createKeyCli(env, "acme", "search");
    const admin = createKeyCli(env, "acme", "keys");
    const scope = await (await fetch(`${server.url}/v1/keys/key_01ABC`, { method: "DELETE", headers: { authorization: `Bearer ${searcher.key}` } })).json();
    expect(scope.error).toMatchObject({ code: "insufficient_scope", message: 'This key lacks the "keys" scope required by DELETE /v1/keys/{key_id}.' });
    const query = await (await fetch(`${server.url}/v1/keys/key_01ABC?force=1`, { method: "DELETE", headers: { authorization: `Bearer ${admin.key}` } })).json();
    expect(query.error).toMatchObject({ code: "invalid_request", message: 'Unknown query parameter "force" on DELETE /v1/keys/{key_id}; it takes none.' });
  });
});
