/** GET /v1/usage/daily (#16): per-day use by group, for the key and the keys it may manage, on memory and SQLite. */
import { afterEach, describe, expect, it } from "vitest";
import { FakeClock, makeApp, type TestApp } from "../helpers/app.ts";
import { echoOperation } from "../helpers/test-operation.ts";

const echo = (t: TestApp, key: string, json: unknown = { query: "q" }) => t.request("/v1/test/echo", { method: "POST", key, json });
const daily = async (t: TestApp, key: string) => {
  const r = await t.request("/v1/usage/daily", { key });
  expect(r.status).toBe(200);
  return r.json();
};
const DAY = 86_400_000;

describe.each(["memory", "sqlite"] as const)("GET /v1/usage/daily (%s)", (storage) => {
  let t: TestApp;
  afterEach(() => t?.close());

  it("counts each answered request on its UTC day, by group; refused and failed ones on none; the days add up to /v1/usage", async () => {
    t = await makeApp({ storage, clock: new FakeClock(Date.UTC(2026, 10, 1, 12)), options: { operations: echoOperation } });
    const { secret } = await t.key("acme", ["search"]);
    for (let i = 0; i < 3; i++) expect((await echo(t, secret)).status).toBe(200);
    await t.clock.advance(DAY * 2); // the 3rd
    expect((await echo(t, secret)).status).toBe(200);
    expect((await echo(t, secret, { query: "" })).status).toBe(400); // refused: counts nothing
    expect((await echo(t, secret, { query: "x", fail: true })).status).toBe(500); // 5xx: released
    await t.clock.advance(DAY * 2 - 1); // the 5th, 11:59:59.999
    expect((await echo(t, secret)).status).toBe(200);

    const body = await daily(t, secret);
    expect(body.period).toBe("2026-11");
    expect(body.days).toEqual(["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04", "2026-11-05"]);
    expect(body.groups).toEqual(["search", "video", "research", "social", "scrape", "crawl"]);
    expect(body.keys).toBeNull(); // no keys scope
    const zero = { search: 0, video: 0, research: 0, social: 0, scrape: 0, crawl: 0 };
    expect(body.key).toMatchObject({ used: 5, name: "acme-key" });
    expect(body.key.prefix).toMatch(/^qry_[0-9a-f]{4}\.\.\.[0-9a-f]{4}$/);
    expect(body.key.daily).toEqual([
      { date: "2026-11-01", used: 3, groups: { ...zero, search: 3 } },
      { date: "2026-11-02", used: 0, groups: zero },
      { date: "2026-11-03", used: 1, groups: { ...zero, search: 1 } },
      { date: "2026-11-04", used: 0, groups: zero },
      { date: "2026-11-05", used: 1, groups: { ...zero, search: 1 } },
    ]);
    const usage = await (await t.request("/v1/usage", { key: secret })).json();
    expect(usage.used).toBe(body.key.used);
  });

  it("with the keys scope, lists the account's keys it may manage side by side, never stronger ones nor other accounts'", async () => {
    t = await makeApp({ storage, options: { operations: echoOperation } });
    const manager = await t.key("acme", ["search", "keys"]);
    const lesser = await t.key("acme", ["search"]);
    const stronger = await t.key("acme", ["search", "scrape", "keys"]);
    const stranger = await t.key("other", ["search", "keys"]);
    for (const [k, n] of [[manager, 1], [lesser, 2], [stronger, 3], [stranger, 4]] as const) {
      for (let i = 0; i < n; i++) expect((await echo(t, k.secret)).status).toBe(200);
    }
    const body = await daily(t, manager.secret);
    const used = Object.fromEntries(body.keys.map((k: { id: string; used: number }) => [k.id, k.used]));
    expect(used).toEqual({ [manager.id]: 1, [lesser.id]: 2 }); // the stronger key and the other account's are absent
    expect(body.keys.map((k: { id: string }) => k.id)).toEqual([lesser.id, manager.id]); // newest first, as GET /v1/keys
    expect(body.key.id).toBe(manager.id);
    const top = await daily(t, stronger.secret);
    expect(top.keys.map((k: { id: string }) => k.id).sort()).toEqual([manager.id, lesser.id, stronger.id].sort());
    expect(top.keys.find((k: { id: string }) => k.id === stronger.id).daily.at(-1)).toMatchObject({ date: "2026-11-22", used: 3 });
    // a revoked key that was used this month stays, after the active ones and marked: its use is the account's month too
    expect((await t.request(`/v1/keys/${lesser.id}`, { method: "DELETE", key: manager.secret })).status).toBe(200);
    const after = (await daily(t, manager.secret)).keys;
    expect(after.map((k: { id: string; used: number; revoked_at: string | null }) => [k.id, k.used, k.revoked_at])).toEqual([[manager.id, 1, null], [lesser.id, 2, expect.any(String)]]);
    // one never used is left out once revoked
    const idle = await t.key("acme", ["search"]);
    expect((await t.request(`/v1/keys/${idle.id}`, { method: "DELETE", key: manager.secret })).status).toBe(200);
    expect((await daily(t, manager.secret)).keys.map((k: { id: string }) => k.id)).toEqual([manager.id, lesser.id]);
  });

  it("starts a new month from day 1 with nothing counted, and takes a per-minute slot but no quota", async () => {
    t = await makeApp({ storage, env: { QUARRY_PLANS: '{"free":{"quota":1,"per_minute":2}}' }, options: { operations: echoOperation } });
    const { secret } = await t.key("acme", ["search"]);
    expect((await echo(t, secret)).status).toBe(200);
    expect((await t.request("/v1/usage/daily", { key: secret })).status).toBe(200); // quota used up: still readable
    expect((await t.request("/v1/usage/daily", { key: secret })).status).toBe(429); // the per-minute window counts it
    await t.clock.advance(9 * DAY); // 2026-12-01T12:00Z
    const body = await daily(t, secret);
    expect(body).toMatchObject({ period: "2026-12", days: ["2026-12-01"] });
    expect(body.key.daily).toEqual([{ date: "2026-12-01", used: 0, groups: { search: 0, video: 0, research: 0, social: 0, scrape: 0, crawl: 0 } }]);
  });

  it("needs a valid key, answers the trailing slash the same, and is in the OpenAPI document with a description", async () => {
    t = await makeApp({ storage });
    const r = await t.request("/v1/usage/daily");
    expect(r.status).toBe(401);
    expect((await r.json()).error.request_id).toMatch(/^req_/);
    const { secret } = await t.key("acme", ["search"]);
    expect((await t.request("/v1/usage/daily/", { key: secret })).status).toBe(200);
    const post = await t.request("/v1/usage/daily", { method: "POST", key: secret });
    expect(post.status).toBe(405);
    const doc = await (await t.request("/openapi.json")).json();
    const op = doc.paths["/v1/usage/daily"].get;
    expect(op.operationId).toBe("getDailyUsage");
    expect(op.description).toMatch(/UTC day/);
    expect(Object.keys(op.responses["200"].content["application/json"].schema.properties)).toEqual(["period", "days", "groups", "key", "keys"]);
  });
});
