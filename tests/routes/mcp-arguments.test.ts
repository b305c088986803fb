/**
 * Tool calls on POST /mcp with arguments a hand-written client gets wrong. A job tool (status,
 * cancel) has no body schema, so its arguments used to go unchecked: a missing or non-string id
 * left the path `/v1/crawl`, answered "GET is not allowed on /v1/crawl", and an unknown argument
 * was dropped, where every body tool refuses one. A tools/call whose params.name is missing or
 * whose arguments are not an object was answered -32603 (Internal error) with the schema
 * library's dump as its message, instead of -32602 (Invalid params). And research's `stream`,
 * which its tool leaves out, went through: the tool answered `null` as a success, metered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await makeApp();
  key = (await t.key("acme", ["scrape", "research"])).secret;
});
afterAll(async () => {
  await t?.close();
});

async function rpc(message: unknown): Promise<{ status: number; body: Record<string, any> }> {
  const res = await t.request("/mcp", { method: "POST", key, json: message, headers: { accept: "application/json, text/event-stream" } });
  return { status: res.status, body: await res.json() };
}

const call = (id: number, name: string, args: unknown) => rpc({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });

describe("job tools check their arguments as body tools do", () => {
  it("a missing id is named as missing, not a method the caller never chose", async () => {
    for (const tool of ["crawl_status", "crawl_cancel", "batch_scrape_status", "batch_scrape_cancel"]) {
      const { body } = await call(1, tool, {});
      expect(body.result.isError, tool).toBe(true);
      expect(body.result.structuredContent.error).toMatchObject({ code: "invalid_request", message: "id: id is required", details: [{ field: "id", message: "id is required" }] });
      expect(body.result.structuredContent.error.request_id).toMatch(/^req_/);
    }
  });

  it("an id that is not a string, or is empty, is refused naming it", async () => {
    expect((await call(2, "crawl_status", { id: 5 })).body.result.structuredContent.error.message).toBe("id: id must be a string");
    expect((await call(3, "crawl_status", { id: "" })).body.result.structuredContent.error.message).toBe("id: id must not be empty");
  });

  it("an argument the tool does not take is an unknown field, not dropped", async () => {
    const { body } = await call(4, "crawl_status", { id: "crawl_01M8AZS4HGB76DCGEWRZFYZCSA", bogus: 1 });
    expect(body.result.structuredContent.error).toMatchObject({ code: "invalid_request", message: "bogus: unknown field" });
  });

  it("a field the tool leaves out of its schema is unknown: research's stream answered the tool result null", async () => {
    const { body } = await call(6, "research", { query: "how do LSM trees compact", stream: true });
    expect(body.result.isError).toBe(true);
    expect(body.result.structuredContent.error).toMatchObject({ code: "invalid_request", message: "stream: unknown field" });
    const used = await (await t.request("/v1/usage", { key })).json();
    expect(used.endpoints.research).toBe(0);
  });

  it("well-formed arguments still reach the native route (an unknown job is its 404)", async () => {
    const { body } = await call(5, "crawl_status", { id: "crawl_01M8AZS4HGB76DCGEWRZFYZCSA", skip: 0 });
    expect(body.result.structuredContent.error).toMatchObject({ code: "not_found", message: "No crawl job crawl_01M8AZS4HGB76DCGEWRZFYZCSA." });
  });
});

describe("a tools/call with malformed params is Invalid params (-32602)", () => {
  it("params.name missing or not a string, arguments not an object, params missing", async () => {
    const cases: unknown[] = [{ arguments: {} }, { name: 7, arguments: {} }, { name: "crawl_status", arguments: "x" }, undefined];
    for (const [i, params] of cases.entries()) {
      const { status, body } = await rpc({ jsonrpc: "2.0", id: 10 + i, method: "tools/call", ...(params === undefined ? {} : { params }) });
      expect(status, JSON.stringify(params)).toBe(200);
      expect(body.id).toBe(10 + i);
      expect(body.error.code, JSON.stringify(params)).toBe(-32602);
      expect(body.error.message).toMatch(/^Invalid params: tools\/call/);
      expect(body).not.toHaveProperty("result");
    }
  });

  it("inside a batch too: each malformed tools/call is -32602 with the short message, beside the other answers (#28)", async () => {
    // It was -32603 with the schema library's dump inside a batch, -32602 only as a single message.
    const { status, body } = await rpc([
      { jsonrpc: "2.0", id: 21, method: "tools/call", params: { name: 5, arguments: {} } },
      { jsonrpc: "2.0", id: 22, method: "ping" },
      { jsonrpc: "2.0", id: 23, method: "tools/call", params: { name: "crawl_status", arguments: "x" } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 24, method: "tools/call", params: { name: "crawl_status", arguments: { id: "crawl_01M8AZS4HGB76DCGEWRZFYZCSA" } } },
    ]);
    expect(status).toBe(200);
    expect(Array.isArray(body)).toBe(true);
    const byId = Object.fromEntries((body as any[]).map((m) => [m.id, m]));
    expect(Object.keys(byId).sort()).toEqual(["21", "22", "23", "24"]);
    for (const id of [21, 23]) {
      expect(byId[id].error.code, String(id)).toBe(-32602);
      expect(byId[id].error.message).toMatch(/^Invalid params: tools\/call/);
      expect(byId[id].error.message.length).toBeLessThan(120);
      expect(byId[id]).not.toHaveProperty("result");
    }
    expect(byId[21].error.message).toBe("Invalid params: tools/call needs params.name, the tool's name as a string (see tools/list).");
    expect(byId[22]).toEqual({ jsonrpc: "2.0", id: 22, result: {} });
    expect(byId[24].result.structuredContent.error.code).toBe("not_found");
    // A batch of nothing but malformed calls is answered the same way, without the SDK.
    const alone = await rpc([{ jsonrpc: "2.0", id: 25, method: "tools/call", params: { name: 5 } }]);
    expect(alone.status).toBe(200);
    expect(alone.body).toEqual([{ jsonrpc: "2.0", id: 25, error: { code: -32602, message: "Invalid params: tools/call needs params.name, the tool's name as a string (see tools/list)." } }]);
  });

  it("an empty batch is still one Invalid Request (-32600)", async () => {
    const { status, body } = await rpc([]);
    expect(status).toBe(400);
    expect(body).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) } });
  });
});
