/**
 * An account whose plan was removed from QUARRY_PLANS is served on the lowest plan ("free"), as
 * before, but no longer silently: the server logs it once per plan id, and the CLI shows
 * `gold (not defined; served as free)` wherever it prints the account's plan.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

const WITH_GOLD = '{"gold":{"quota":5000,"per_minute":1000}}';
// gold is gone; free's per-minute limit is low enough to see it applied.
const WITHOUT_GOLD = '{"free":{"quota":700,"per_minute":3}}';
const WARNING = 'is on plan \\"gold\\", which QUARRY_PLANS does not define; it is served as \\"free\\"';

async function usage(s: Server, key: string): Promise<Response> {
  return fetch(`${s.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
}

async function logged(s: Server, text: string): Promise<number> {
  // Log lines are written asynchronously: give the last request's line a moment to arrive.
  await new Promise((r) => setTimeout(r, 300));
  return s.output().split(text).length - 1;
}

describe("an account on a plan QUARRY_PLANS no longer defines", () => {
  const data = tempDataDir();
  let acme: { id: string; key: string };
  let globex: { id: string; key: string };
  let server: Server | undefined;

  beforeAll(async () => {
    const before = { QUARRY_DATA_DIR: data, QUARRY_PLANS: WITH_GOLD };
    acme = createKeyCli(before, "acme", "search", "gold");
    globex = createKeyCli(before, "globex", "search", "gold");
    const first = await startServer("node", before);
    try {
      // globex's key, not acme's: the per-minute window outlives the restart, and acme's is counted below.
      const body = await (await usage(first, globex.key)).json();
      expect(body).toMatchObject({ plan: "gold", quota: 5000, per_minute_limit: 1000 });
      expect(await logged(first, "QUARRY_PLANS does not define")).toBe(0);
    } finally {
      await first.stop();
    }
  }, 90_000);
  afterAll(() => server?.stop());

  it("is served on free's limits after a restart without the plan, and the server says so once per plan id", async () => {
    server = await startServer("node", { QUARRY_DATA_DIR: data, QUARRY_PLANS: WITHOUT_GOLD });
    const first = await usage(server, acme.key);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ plan: "free", quota: 700, per_minute_limit: 3 });
    expect((await usage(server, acme.key)).status).toBe(200);
    expect((await usage(server, acme.key)).status).toBe(200);
    const refused = await usage(server, acme.key);
    expect(refused.status).toBe(429); // free's 3 a minute, not gold's 1000
    expect((await refused.json()).error.code).toBe("rate_limited");
    // Another account on the same missing plan: served the same way, with no second warning.
    expect((await (await usage(server, globex.key)).json()).per_minute_limit).toBe(3);

    expect(await logged(server, WARNING)).toBe(1);
    const line = server.output().split("\n").find((l) => l.includes(WARNING))!;
    const entry = JSON.parse(line);
    expect(entry.msg).toBe('account "acme" is on plan "gold", which QUARRY_PLANS does not define; it is served as "free"');
    expect(entry).toMatchObject({ level: 40, account: "acme", plan: "gold", served_as: "free" });
    expect(line).not.toMatch(/qry_/); // no secret, not even a prefix
  }, 90_000);

  it("the CLI shows the missing plan in usage and keys create, and keys create keeps today's rules", () => {
    const env = { QUARRY_DATA_DIR: data, QUARRY_PLANS: WITHOUT_GOLD };
    const text = cli(["usage", "--account", "acme"], env);
    expect(text.status).toBe(0);
    expect(text.stdout).toContain("Account acme: plan gold (not defined; served as free), quota 700 per key per month, 3/min;");
    const json = JSON.parse(cli(["usage", "--account", "acme", "--json"], env).stdout);
    expect(json).toMatchObject({ account: "acme", plan: "gold", served_plan: "free", quota: 700, per_minute_limit: 3 });

    // Without --plan a key is still created on the account's plan, which is named as missing.
    const created = cli(["keys", "create", "--account", "acme", "--scopes", "search", "--name", "more"], env);
    expect(created.status).toBe(0);
    expect(created.stdout).toContain("for account acme on plan gold (not defined; served as free), scopes search.");
    const quiet = cli(["keys", "create", "--account", "acme", "--scopes", "search", "--name", "json", "--json"], env);
    expect(quiet.status).toBe(0);
    expect(Object.keys(JSON.parse(quiet.stdout))).toContain("key"); // stdout stays the one JSON object
    expect(quiet.stderr).toBe("quarry: account acme is on plan gold (not defined; served as free)\n");
    // --plan must still name a defined plan, and still does not change an existing account's plan.
    const gold = cli(["keys", "create", "--account", "acme", "--scopes", "search", "--name", "x", "--plan", "gold"], env);
    expect(gold.status).toBe(2);
    expect(gold.stderr).toContain('unknown plan "gold"');
    const free = cli(["keys", "create", "--account", "acme", "--scopes", "search", "--name", "x", "--plan", "free"], env);
    expect(free.status).toBe(2);
    expect(free.stderr).toBe(
      'quarry: account "acme" is on plan gold (not defined; served as free); keys create does not change it: run `quarry accounts set-plan acme free`, or leave out --plan\n',
    );
    // set-plan moves it onto a defined plan, and the label goes away.
    expect(cli(["accounts", "set-plan", "acme", "free"], env).status).toBe(0);
    expect(cli(["usage", "--account", "acme"], env).stdout).toContain("Account acme: plan free, quota 700");
    expect(JSON.parse(cli(["usage", "--account", "globex", "--json"], env).stdout)).toMatchObject({ plan: "gold", served_plan: "free" });
  }, 120_000);
});
