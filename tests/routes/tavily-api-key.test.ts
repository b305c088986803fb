/**
 * Tavily's clients may send the key as the body's `api_key` instead of a header. A malformed one
 * was answered "Malformed Authorization header", naming a header the client never sent; a
 * missing key named only the header, though the body's api_key is taken too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;

beforeAll(async () => {
  t = await makeApp();
});
afterAll(async () => {
  await t?.close();
});

async function post(path: string, body: Record<string, unknown>, authorization?: string) {
  const res = await t.request(`/compat/tavily${path}`, { method: "POST", json: body, ...(authorization ? { headers: { authorization } } : {}) });
  return { status: res.status, detail: (await res.json()).detail };
}

describe("Tavily's key in the body", () => {
  it("a malformed api_key is named as the api_key, not as the Authorization header", async () => {
    for (const path of ["/search", "/extract", "/map", "/crawl", "/research"]) {
      const { status, detail } = await post(path, { query: "x", urls: ["https://example.org/"], url: "https://example.org/", input: "x", api_key: "tvly-abc" });
      expect(status, path).toBe(401);
      expect(detail.code).toBe("invalid_auth");
      expect(detail.error, path).toBe("Malformed api_key; expected 'qry_' followed by 64 lowercase hex characters.");
    }
  });

  it("a missing key says both places it may come from; a malformed header keeps the header's words", async () => {
    const missing = await post("/search", { query: "x" });
    expect(missing.detail.error).toBe("Missing API key; send 'Authorization: Bearer <API key>' or the key as the body's api_key.");
    const header = await post("/search", { query: "x", api_key: "tvly-abc" }, "Bearer qry_123");
    expect(header.detail.error).toMatch(/^Malformed Authorization header/);
    // A GET has no body to carry the key: its words are the native ones.
    const usage = await (await t.request("/compat/tavily/usage")).json();
    expect(usage.detail.error).toMatch(/^Missing Authorization header/);
  });
});
