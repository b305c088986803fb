/** Per-minute window, monthly quota, metering by group, refunds and the X-RateLimit-* headers. */
import { afterEach, describe, expect, it } from "vitest";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { echoOperation } from "../helpers/test-operation.ts";

const search = (t: TestApp, key: string, json: unknown = { query: "q" }) => t.request("/v1/test/echo", { method: "POST", key, json });

describe.each(["memory", "sqlite"] as const)("limits and usage (%s)", (storage) => {
  let t: TestApp;
  afterEach(() => t?.close());

  it("500 simultaneous requests on a per-minute limit of 60 admit exactly 60", async () => {
    t = await makeApp({ storage, options: { operations: echoOperation } });
    const { secret } = await t.key("acme", ["search"]);
    const res = await Promise.all(Array.from({ length: 500 }, () => search(t, secret)));
    const codes = res.map((r) => r.status);
    expect(codes.filter((c) => c === 200)).toHaveLength(60);
    expect(codes.filter((c) => c === 429)).toHaveLength(440);
    const limited = res.find((r) => r.status === 429)!;
    expect(Number(limited.headers.get("retry-after"))).toBe(60);
    const body = await limited.json();
    expect(body.error).toMatchObject({ code: "rate_limited", retry_after: 60 });
    expect(body.error.message).toContain("60 requests per minute");
    // /v1/usage takes a window slot too, so it waits for the window to pass
    expect((await t.request("/v1/usage", { key: secret })).status).toBe(429);
    await t.clock.advance(60_000);
    expect((await (await t.request("/v1/usage", { key: secret })).json()).used).toBe(60);
  });

  it("a quota of 5 admits exactly 5, then quota_exceeded naming the reset", async () => {
    t = await makeApp({ storage, env: { QUARRY_PLANS: '{"free":{"quota":5,"per_minute":1000}}' }, options: { operations: echoOperation } });
    const { secret } = await t.key("acme", ["search"]);
    const res = await Promise.all(Array.from({ length: 100 }, () => search(t, secret)));
    expect(res.filter((r) => r.status === 200)).toHaveLength(5);
    const over = res.find((r) => r.status === 429)!;
    const body = await over.json();
    expect(body.error.code).toBe("quota_exceeded");
    expect(body.error.retry_after).toBeUndefined();
    expect(over.headers.get("retry-after")).toBeNull();
    expect(body.error.message).toContain("2026-12-01T00:00:00Z");
    expect(body.error.message).toMatch(/upgrade/i);
    expect(over.headers.get("x-ratelimit-remaining")).toBe("0");
    // usage is still readable once the quota is gone
    const usage = await (await t.request("/v1/usage", { key: secret })).json();
    expect(usage).toMatchObject({ quota: 5, used: 5, remaining: 0, endpoints: { search: 5 } });
  });

  it("the window slides: a request is admitted again exactly when the oldest leaves", async () => {
    t = await makeApp({ storage, env: { QUARRY_PLANS: '{"free":{"per_minute":2}}' } });
    const { secret } = await t.key("acme", ["search"]);
    expect((await t.request("/v1/usage", { key: secret })).status).toBe(200);
    await t.clock.advance(30_000);
    expect((await t.request("/v1/usage", { key: secret })).status).toBe(200);
    await t.clock.advance(29_999);
    const r = await t.request("/v1/usage", { key: secret });
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBe("1");
    await t.clock.advance(1);
    expect((await t.request("/v1/usage", { key: secret })).status).toBe(200);
    expect((await t.request("/v1/usage", { key: secret })).status).toBe(429);
  });

  it("meters by group, refused and invalid requests count nothing, and a 5xx gives its unit back", async () => {
    t = await makeApp({ storage, options: { operations: echoOperation } });
    const { secret } = await t.key("acme", ["search"]);
    expect((await search(t, secret)).status).toBe(200);
    expect((await search(t, secret, { query: "q", extra: 1 })).status).toBe(400);
    const failed = await search(t, secret, { query: "q", fail: true });
    expect(failed.status).toBe(500);
    const failedBody = await failed.json();
    expect(failedBody.error).toMatchObject({ code: "internal_error" });
    expect(failedBody.error.message).not.toContain("boom");
    expect(failed.headers.get("x-ratelimit-remaining")).toBe("999");
    expect(t.logger.lines.some((l) => l.req_id === failedBody.error.request_id && JSON.stringify(l).includes("boom"))).toBe(true);
    await t.request("/v1/keys", { key: secret }); // out of scope: refused
    const usage = await (await t.request("/v1/usage", { key: secret })).json();
    expect(usage).toEqual({
      plan: "free", quota: 1000, used: 1, remaining: 999, reset_at: "2026-12-01T00:00:00Z", per_minute_limit: 60,
      endpoints: { search: 1, video: 0, research: 0, social: 0, scrape: 0, crawl: 0 },
    });
  });

  it("headers describe the key's plan; unlimited reads 'unlimited'; a plan change applies at once", async () => {
    t = await makeApp({ storage, options: { operations: echoOperation } });
    const { secret } = await t.key("acme", ["search"]);
    const r1 = await search(t, secret);
    expect(r1.headers.get("x-ratelimit-limit")).toBe("1000");
    expect(r1.headers.get("x-ratelimit-remaining")).toBe("999");
    expect(r1.headers.get("x-ratelimit-reset")).toBe("2026-12-01T00:00:00Z");
    expect(r1.headers.get("x-request-id")).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
    await t.key("acme", ["search"], "enterprise");
    const r2 = await search(t, secret);
    expect(r2.headers.get("x-ratelimit-limit")).toBe("unlimited");
    expect(r2.headers.get("x-ratelimit-remaining")).toBe("unlimited");
    const usage = await (await t.request("/v1/usage", { key: secret })).json();
    expect(usage).toMatchObject({ plan: "enterprise", quota: null, remaining: null, used: 2, per_minute_limit: 2000 });
  });

  it("the per-IP bucket answers 429 with Retry-After of at least 1, per address", async () => {
    t = await makeApp({ storage, env: { QUARRY_IP_RATE: "1/3" } });
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await t.request("/health", { ip: "203.0.113.9" })).status);
    expect(codes).toEqual([200, 200, 200, 429, 429]);
    const r = await t.request("/health", { ip: "203.0.113.9" });
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await r.json()).error.code).toBe("rate_limited");
    expect((await t.request("/health", { ip: "203.0.113.10" })).status).toBe(200);
    await t.clock.advance(1000);
    expect((await t.request("/health", { ip: "203.0.113.9" })).status).toBe(200);
  });
});
