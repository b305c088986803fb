/**
 * A 404 or 405 says which id or path was asked for, but never echoes a caller's 10 KB of it back:
 * at most 64 characters of an id (128 of a path) and "…". An id no key or job can have is
 * answered without a lookup.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { makeApp, type TestApp } from "../helpers/app.ts";

describe("long ids and paths in errors", () => {
  let t: TestApp;
  let key: string;
  const long = "x".repeat(10_000);
  beforeAll(async () => {
    t = await makeApp();
    key = (await t.key("acme", ["keys", "scrape"])).secret;
  });
  afterAll(() => t.close());

  const errorOf = async (path: string, method = "GET") => {
    const res = await t.request(path, { method, key });
    const text = await res.text();
    return { status: res.status, length: text.length, message: JSON.parse(text).error.message as string };
  };

  it("DELETE /v1/keys/<10 KB id> → a short 404, without asking the key store", async () => {
    const getKey = vi.spyOn(t.ports.keys, "getKey");
    const err = await errorOf(`/v1/keys/key_${long}`, "DELETE");
    expect(err.status).toBe(404);
    expect(err.length).toBeLessThan(300);
    expect(err.message).toBe(`No active key "key_${"x".repeat(60)}…" in this account.`);
    expect(getKey).not.toHaveBeenCalled();
    // A key-shaped id is still looked up, and a short one is echoed whole.
    expect((await errorOf("/v1/keys/key_01J00000000000000000000000", "DELETE")).message).toBe('No active key "key_01J00000000000000000000000" in this account.');
    expect(getKey).toHaveBeenCalledTimes(1);
    getKey.mockRestore();
  });

  it.each([["GET", ""], ["DELETE", ""], ["GET", "/events"]])("%s /v1/crawl/<10 KB id>%s → a short 404 ending in …, without asking the job store", async (method, tail) => {
    const get = vi.spyOn(t.ports.jobs!.store, "get");
    const err = await errorOf(`/v1/crawl/crawl_${long}${tail}`, method);
    expect(err.status).toBe(404);
    expect(err.length).toBeLessThan(300);
    expect(err.message).toBe(`No crawl job crawl_${"x".repeat(58)}….`);
    expect(get).not.toHaveBeenCalled();
    get.mockRestore();
  });

  it("an unknown path, a wrong method and the compatible APIs' 404 echo at most 128 characters of the path", async () => {
    const missing = await errorOf(`/v1/nope/${long}`);
    expect([missing.status, missing.length < 400]).toEqual([404, true]);
    expect(missing.message).toBe(`No such endpoint: GET /v1/nope/${"x".repeat(119)}….`);
    const wrong = await errorOf(`/v1/keys/${long}`, "POST");
    expect([wrong.status, wrong.length < 400]).toEqual([405, true]);
    expect(wrong.message).toMatch(/^POST is not allowed on \/v1\/keys\/x+…; use DELETE\.$/);
    const compat = await t.request(`/compat/tavily/${long}`, { key });
    expect(compat.status).toBe(404);
    expect((await compat.json()).detail.message).toBe(`No such endpoint: GET /compat/tavily/${"x".repeat(113)}….`);
  });

  it("characters beyond the BMP are not split in half when cut", async () => {
    const err = await errorOf(`/v1/keys/${encodeURIComponent("😀".repeat(100))}`, "DELETE");
    expect(err.message).toBe(`No active key "${"😀".repeat(64)}…" in this account.`);
  });
});
