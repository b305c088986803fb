/**
 * `quarry accounts set-plan NAME PLAN` changes an account's plan. A mistyped name used to create
 * a new, keyless account on that plan and report success, leaving the real account unchanged;
 * it is now refused like `keys list` and `usage` refuse an unknown account (exit 2).
 */
import { describe, expect, it } from "vitest";
import { cli, createKeyCli, tempDataDir } from "../helpers/server.ts";

describe("quarry accounts set-plan", () => {
  it("refuses an account that does not exist and creates nothing; changes one that does", () => {
    const env = { QUARRY_DATA_DIR: tempDataDir() };
    createKeyCli(env, "acme", "search");
    const typo = cli(["accounts", "set-plan", "acmee", "pro"], env);
    expect(typo.status).toBe(2);
    expect(typo.stderr).toContain('no account "acmee"');
    expect(typo.stdout).toBe("");
    expect(cli(["usage", "--account", "acmee"], env).status).toBe(2);
    const real = cli(["accounts", "set-plan", "acme", "pro", "--json"], env);
    expect(real.status).toBe(0);
    expect(JSON.parse(real.stdout)).toEqual({ account: "acme", plan: "pro" });
  }, 90_000);

  it("keys create --plan on an existing account on another plan is refused (exit 2), pointing to set-plan; the same plan is fine", () => {
    const env = { QUARRY_DATA_DIR: tempDataDir() };
    createKeyCli(env, "acme", "search", "starter");
    const other = cli(["keys", "create", "--account", "acme", "--scopes", "search", "--name", "second", "--plan", "pro"], env);
    expect(other.status).toBe(2);
    expect(other.stderr).toBe('quarry: account "acme" is on plan starter; keys create does not change it: run `quarry accounts set-plan acme pro`, or leave out --plan\n');
    expect(other.stdout).toBe("");
    const usage = JSON.parse(cli(["usage", "--account", "acme", "--json"], env).stdout);
    expect([usage.plan, usage.keys.length]).toEqual(["starter", 1]); // no plan change, no key created
    expect(createKeyCli(env, "acme", "search", "starter").id).toMatch(/^key_/);
    expect(createKeyCli(env, "acme", "scrape").id).toMatch(/^key_/);
    expect(JSON.parse(cli(["usage", "--account", "acme", "--json"], env).stdout).plan).toBe("starter");
  }, 90_000);
});
