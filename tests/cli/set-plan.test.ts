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
});
