/** Bad input never gives a 500 or a hang: each gets its api.md §4 error. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeApp, type TestApp } from "../helpers/app.ts";

describe("bad input", () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await makeApp({ storage: "sqlite" });
    key = (await t.key("acme", ["keys", "search"])).secret;
  });
  afterAll(() => t.close());

  const post = (body: BodyInit | undefined, headers: Record<string, string> = { "content-type": "application/json" }) =>
    t.request("/v1/keys", { method: "POST", key, body, headers });

  it.each([
    ["malformed JSON", "{name:", 400, "invalid_request"],
    ["JSON that is not an object", "[1,2]", 400, "invalid_request"],
    ["a JSON string", '"hello"', 400, "invalid_request"],
    ["null", "null", 400, "invalid_request"],
    ["an empty body", "", 400, "invalid_request"],
    ["wrong types", '{"name":["a"],"scopes":{"a":1}}', 400, "invalid_request"],
    ["unknown fields", '{"name":"a","scopes":["search"],"admin":true}', 400, "invalid_request"],
  ])("%s → %i %s", async (_label, body, status, code) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect((await res.json()).error.code).toBe(code);
  });

  it.each([["[1,2]"], ["[]"], ['"hello"'], ["null"], ["42"], ["true"]])("a body that is JSON but not an object (%s) is told so, not given a field list", async (body) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    const err = (await res.json()).error;
    expect(err.message).toBe("The request body must be a JSON object.");
    expect(err).not.toHaveProperty("details");
  });

  it("a compressed body → 415 saying to send it uncompressed, not 'not valid JSON'", async () => {
    const { gzipSync } = await import("node:zlib");
    const res = await post(gzipSync('{"name":"a","scopes":["search"]}'), { "content-type": "application/json", "content-encoding": "gzip" });
    expect(res.status).toBe(415);
    const err = (await res.json()).error;
    expect(err.code).toBe("unsupported_media_type");
    expect(err.message).toMatch(/Content-Encoding/);
    expect((await post('{"name":"plain","scopes":["search"]}', { "content-type": "application/json", "content-encoding": "identity" })).status).toBe(201);
  });

  it("a body over 64 KiB → 413, whether declared or streamed", async () => {
    const big = JSON.stringify({ name: "a", scopes: ["search"], pad: "x".repeat(70_000) });
    const res = await post(big);
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe("payload_too_large");
    const chunks = new ReadableStream({
      start(ctrl) {
        for (let i = 0; i < 20; i++) ctrl.enqueue(new TextEncoder().encode("x".repeat(5000)));
        ctrl.close();
      },
    });
    const streamed = await t.request("/v1/keys", { method: "POST", key, body: chunks, headers: { "content-type": "application/json" }, duplex: "half" } as RequestInit);
    expect(streamed.status).toBe(413);
  });

  it("exactly 64 KiB is still read (and judged on its content)", async () => {
    const base = JSON.stringify({ name: "a", scopes: ["search"], pad: "" });
    const body = base.replace('"pad":""', `"pad":"${"x".repeat(65536 - base.length)}"`);
    expect(body.length).toBe(65536);
    const res = await post(body);
    expect(res.status).toBe(400);
    expect((await res.json()).error.details[0]).toEqual({ field: "pad", message: "unknown field" });
  });

  it.each([["text/plain"], ["application/x-www-form-urlencoded"], ["multipart/form-data; boundary=x"]])("Content-Type %s → 415", async (type) => {
    const res = await post('{"name":"a","scopes":["search"]}', { "content-type": type });
    expect(res.status).toBe(415);
    expect((await res.json()).error.code).toBe("unsupported_media_type");
  });

  it("a missing Content-Type with a body → 415; application/json with charset is fine", async () => {
    expect((await post('{"name":"a","scopes":["search"]}', {})).status).toBe(415);
    expect((await post('{"name":"a","scopes":["search"]}', { "content-type": "application/json; charset=utf-8" })).status).toBe(201);
  });

  it.each([["GET", "/v1/nothing-here"], ["GET", "/"], ["POST", "/v2/search"], ["GET", "/v1/keys/key_x/extra"]])("%s %s → 404 not_found", async (method, path) => {
    const res = await t.request(path, { method, key });
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(body.error.code).toBe("not_found");
    expect(res.headers.get("x-request-id")).toBe(body.error.request_id);
    expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
  });

  it.each([["PUT", "/v1/keys", "GET, POST"], ["POST", "/health", "GET"], ["GET", "/v1/keys/key_x", "DELETE"], ["PATCH", "/v1/usage", "GET"]])(
    "%s %s → 405 with Allow: %s",
    async (method, path, allow) => {
      const res = await t.request(path, { method, key });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe(allow);
      expect((await res.json()).error.code).toBe("method_not_allowed");
    },
  );

  it("a trailing slash reaches the same route", async () => {
    const res = await t.request("/v1/usage/", { key });
    expect(res.status).toBe(200);
    expect((await res.json()).plan).toBeDefined();
    const wrong = await t.request("/v1/usage/", { method: "POST", key });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET");
  });

  it.each([["a NUL", "bot\u0000"], ["a line break", "bot\nadmin"], ["an escape", "\u001b[31mred"], ["101 characters", "x".repeat(101)]])(
    "a key name with %s → 400 naming the field",
    async (_label, name) => {
      const res = await post(JSON.stringify({ name, scopes: ["search"] }));
      expect(res.status).toBe(400);
      expect((await res.json()).error.details[0].field).toBe("name");
    },
  );

  it("a key name of 100 emoji is 100 characters, and allowed", async () => {
    expect((await post(JSON.stringify({ name: "🔑".repeat(100), scopes: ["search"] }))).status).toBe(201);
  });

  it("integers past the safe range are refused, not rounded", async () => {
    const search = await makeApp();
    try {
      const k = (await search.key("acme", ["search"])).secret;
      const res = await search.request("/v1/video/search", { method: "POST", key: k, body: '{"query":"x","max_duration":99999999999999999999999}', headers: { "content-type": "application/json" } });
      expect(res.status).toBe(400);
      expect((await res.json()).error.details[0].field).toBe("max_duration");
      // One field, one complaint: not "must be a whole number" and then "must be at most" as well.
      const huge = await search.request("/v1/video/search", { method: "POST", key: k, body: '{"query":"x","max_results":1e400,"freshness":7}', headers: { "content-type": "application/json" } });
      const details = (await huge.json()).error.details as Array<{ field: string }>;
      expect(details.map((d) => d.field)).toEqual(["max_results", "freshness"]);
    } finally {
      await search.close();
    }
  });

  it("none of the above cost quota or left a 500 in the log", () => {
    expect(t.logger.lines.filter((l) => Number(l.status) >= 500)).toEqual([]);
  });
});
