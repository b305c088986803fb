/** The quarry CLI end to end, against a real SQLite file and a real server process. */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, createKeyCli, ROOT, startServer, tempDataDir, type Server } from "../helpers/server.ts";
import { parseConfig } from "../../core/config.ts";
import { buildPorts, systemClock } from "../../adapters/shared/bootstrap.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";
import { createLogger } from "../../adapters/shared/logger.ts";

describe("quarry CLI", () => {
  let env: Record<string, string>;
  beforeAll(() => {
    env = { QUARRY_DATA_DIR: tempDataDir() };
  });

  it("keys create --json prints exactly one JSON object: the POST /v1/keys body", () => {
    const r = cli(["keys", "create", "--account", "acme", "--scopes", "search,keys", "--name", "first", "--json"], env);
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    const body = JSON.parse(r.stdout);
    expect(Object.keys(body).sort()).toEqual(["created_at", "id", "key", "last_used_at", "name", "prefix", "scopes"]);
    expect(body).toMatchObject({ name: "first", scopes: ["search", "keys"], last_used_at: null });
    expect(body.key).toMatch(/^qry_[0-9a-f]{64}$/);
    expect(r.stderr).toBe("");
  });

  it("keys create without --json shows the secret once with a warning; list shows it masked", () => {
    const r = cli(["keys", "create", "--account", "acme", "--scopes", "search", "--name", "human"], env);
    expect(r.status).toBe(0);
    const secret = /qry_[0-9a-f]{64}/.exec(r.stdout)![0];
    expect(r.stdout).toMatch(/shown once/);
    const list = cli(["keys", "list", "--account", "acme", "--json"], env);
    const { keys } = JSON.parse(list.stdout);
    expect(keys.map((k: { name: string }) => k.name)).toEqual(["human", "first"]);
    expect(list.stdout).not.toContain(secret);
    expect(keys[0].prefix).toBe(`qry_${secret.slice(4, 8)}...${secret.slice(-4)}`);
  });

  it("refuses bad arguments with exit code 2 and a message", () => {
    const cases = [
      ["keys", "create", "--account", "acme", "--scopes", "admin", "--name", "x"],
      ["keys", "create", "--account", "acme", "--scopes", "search"],
      ["keys", "create", "--account", "bad name!", "--scopes", "search", "--name", "x"],
      ["keys", "create", "--account", "acme", "--scopes", "search", "--name", "x", "--plan", "platinum"],
      ["keys", "list"],
      ["keys", "fly"],
      ["accounts", "set-plan", "acme"],
      ["keys", "list", "--acount", "acme"],
    ];
    for (const args of cases) {
      const r = cli(args, env);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(/^quarry: /);
      expect(r.stdout).toBe("");
    }
  }, 120_000);

  it("an argument or option a command does not take is refused (exit 2), not dropped", () => {
    const made = createKeyCli(env, "extras", "search");
    const cases: Array<[string[], string]> = [
      [["keys", "revoke", made.id, "key_01ARZ3NDEKTSV4RRFFQ69G5FAV"], 'quarry: keys revoke takes only KEY_ID, not "key_01ARZ3NDEKTSV4RRFFQ69G5FAV"; see quarry help\n'],
      [["keys", "list", "--account", "extras", "extras2"], 'quarry: keys list takes no arguments, not "extras2"; see quarry help\n'],
      [["usage", "--account", "extras", "--scopes", "search"], "quarry: usage does not take --scopes; see quarry help\n"],
      [["accounts", "set-plan", "extras", "pro", "now"], 'quarry: accounts set-plan takes only NAME PLAN, not "now"; see quarry help\n'],
      [["serve", "--json"], "quarry: serve does not take --json; see quarry help\n"],
      [["demo", "now"], 'quarry: demo takes no arguments, not "now"; see quarry help\n'],
      [["usage", "--account", "extras", "--limit", "5"], "quarry: usage does not take --limit; see quarry help\n"],
      // --name is a key's label everywhere else: revoke used to read it as the KEY_ID.
      [["keys", "revoke", "--name", made.id], "quarry: keys revoke does not take --name; see quarry help\n"],
    ];
    for (const [args, stderr] of cases) {
      const r = cli(args, env);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toBe(stderr);
    }
    // Nothing was done: the key is still active, the plan unchanged.
    const keys = JSON.parse(cli(["keys", "list", "--account", "extras", "--json"], env).stdout).keys;
    expect(keys.map((k: { id: string }) => k.id)).toEqual([made.id]);
    expect(JSON.parse(cli(["usage", "--account", "extras", "--json"], env).stdout).plan).toBe("free");
    expect(cli(["fly"], env).stderr).toBe('quarry: unknown command "fly"; commands: serve, demo, mcp, keys, accounts, usage, backup, jobs, help (see quarry help)\n');
  }, 120_000);

  it("--version, help, and a group without its subcommand say what exists", () => {
    const version = cli(["--version"], env);
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);
    const help = cli(["help"], env);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("quarry serve [--host HOST] [--port PORT]");
    expect(help.stdout).toContain("quarry jobs list [--account NAME] [--status STATUS] [--limit N] [--json]");
    expect(help.stdout).toContain("quarry jobs cancel JOB_ID [--json]");
    const keys = cli(["keys"], env);
    expect(keys.status).toBe(2);
    expect(keys.stderr).toBe('quarry: "keys" needs a subcommand: keys create, keys list, keys revoke\n');
  }, 60_000);

  it("option errors are one plain line with balanced quotes", () => {
    const unknown = cli(["keys", "list", "--acount", "acme"], env);
    expect(unknown.stderr).toBe("quarry: unknown option --acount; see quarry help\n");
    const missing = cli(["keys", "list", "--account"], env);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe("quarry: option --account needs a value; see quarry help\n");
  }, 60_000);

  it("messages name no account that was never given", () => {
    const revoke = cli(["keys", "revoke", "key_01ARZ3NDEKTSV4RRFFQ69G5FAV"], env);
    expect(revoke.status).toBe(2);
    expect(revoke.stderr).toBe('quarry: no active key "key_01ARZ3NDEKTSV4RRFFQ69G5FAV"\n');
    const list = cli(["keys", "list", "--account", "ghost"], env);
    expect(list.stderr).toBe('quarry: no account "ghost"\n');
  }, 60_000);

  it("a name that matches nothing exits 2 whichever command it is given to: an account, a key, a plan", () => {
    const made = createKeyCli(env, "named", "search");
    expect(cli(["keys", "revoke", made.id], env).status).toBe(0);
    const cases: Array<[string[], string]> = [
      [["keys", "list", "--account", "ghost"], 'quarry: no account "ghost"\n'],
      [["usage", "--account", "ghost"], 'quarry: no account "ghost"\n'],
      [["accounts", "set-plan", "ghost", "pro"], 'quarry: no account "ghost"\n'],
      [["accounts", "set-plan", "named", "platinum"], 'quarry: unknown plan "platinum"; plans: free, starter, pro, enterprise\n'],
      [["keys", "revoke", "key_01ARZ3NDEKTSV4RRFFQ69G5FAV"], 'quarry: no active key "key_01ARZ3NDEKTSV4RRFFQ69G5FAV"\n'],
      [["keys", "revoke", "not-a-key-id"], 'quarry: no active key "not-a-key-id"\n'],
      [["keys", "revoke", made.id], `quarry: no active key "${made.id}"\n`],
    ];
    for (const [args, stderr] of cases) {
      const r = cli(args, env);
      expect({ status: r.status, stderr: r.stderr, stdout: r.stdout }, args.join(" ")).toEqual({ status: 2, stderr, stdout: "" });
    }
    // --json changes where the answer goes, not the exit code of a refusal.
    expect(cli(["keys", "revoke", made.id, "--json"], env).status).toBe(2);
    // A failure that is not in what was typed stays 1: configuration the environment gives.
    expect(cli(["keys", "revoke", made.id], { ...env, QUARRY_PLANS: "{broken" }).status).toBe(1);
  }, 120_000);

  it("serve --host and --port override the environment", async () => {
    const probe = createServer().listen(0, "127.0.0.1");
    await new Promise((r) => probe.once("listening", r));
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const [cmd, args] = [process.execPath, [join(ROOT, "bin/quarry.js"), "serve", "--host", "127.0.0.1", "--port", String(port)]];
    const proc = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, QUARRY_DATA_DIR: tempDataDir(), QUARRY_HOST: "localhost", QUARRY_PORT: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    proc.stdout!.on("data", (d) => (out += d));
    proc.stderr!.on("data", (d) => (out += d));
    try {
      const until = Date.now() + 30_000;
      while (!out.includes("quarry listening") && proc.exitCode === null && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(out).toContain(`"url":"http://127.0.0.1:${port}"`);
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    } finally {
      proc.kill("SIGTERM");
      await new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once("exit", r)));
    }
  }, 60_000);

  it("a bad --port or an empty --host is a bad argument naming the flag (exit 2), not QUARRY_PORT", () => {
    const cases: Array<[string[], string]> = [
      [["serve", "--port", "abc"], 'quarry: --port "abc" is not a port number (0-65535)\n'],
      [["serve", "--port", "70000"], 'quarry: --port "70000" is not a port number (0-65535)\n'],
      [["serve", "--port", ""], 'quarry: --port "" is not a port number (0-65535)\n'],
      [["serve", "--host", " "], "quarry: --host needs an address, e.g. 127.0.0.1 or 0.0.0.0\n"],
    ];
    for (const [args, stderr] of cases) {
      const r = cli(args, { ...env, QUARRY_PORT: "0" });
      expect(r.stderr, args.join(" ")).toBe(stderr);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
    }
  }, 120_000);

  it("bad configuration stops with a message naming the variable", () => {
    const r = cli(["keys", "list", "--account", "acme"], { ...env, QUARRY_PLANS: "{broken" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("QUARRY_PLANS");
  });

  it("reads a .env file in the working directory", () => {
    const dir = tempDataDir();
    writeFileSync(join(dir, ".env"), `QUARRY_DATA_DIR=${join(dir, "data")}\n`);
    const r = cli(["keys", "create", "--account", "dotenv", "--scopes", "search", "--name", "e", "--json"], {}, dir);
    expect(r.status).toBe(0);
    const again = cli(["keys", "list", "--account", "dotenv", "--json"], {}, dir);
    expect(JSON.parse(again.stdout).keys).toHaveLength(1);
  });

  describe("with a running server", () => {
    let s: Server;
    let admin: { id: string; key: string };
    beforeAll(async () => {
      admin = createKeyCli(env, "ops", "search,keys");
      s = await startServer("node", env);
    }, 60_000);
    afterAll(() => s?.stop());

    it("revoke takes effect on the server's very next request", async () => {
      const victim = createKeyCli(env, "ops", "search");
      expect((await fetch(`${s.url}/v1/usage`, { headers: { authorization: `Bearer ${victim.key}` } })).status).toBe(200);
      const r = cli(["keys", "revoke", victim.id, "--json"], env);
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ id: victim.id, revoked: true });
      expect((await fetch(`${s.url}/v1/usage`, { headers: { authorization: `Bearer ${victim.key}` } })).status).toBe(401);
      // Revoked already: no active key by that id, a name that matches nothing (exit 2).
      expect(cli(["keys", "revoke", victim.id], env).status).toBe(2);
    }, 90_000);

    it("accounts set-plan changes the limits at once; usage reports per key", async () => {
      const auth = { authorization: `Bearer ${admin.key}` };
      expect((await (await fetch(`${s.url}/v1/usage`, { headers: auth })).json()).plan).toBe("free");
      const r = cli(["accounts", "set-plan", "ops", "pro", "--json"], env);
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ account: "ops", plan: "pro" });
      const usage = await (await fetch(`${s.url}/v1/usage`, { headers: auth })).json();
      expect(usage).toMatchObject({ plan: "pro", quota: 100_000, per_minute_limit: 500 });
      const u = cli(["usage", "--account", "ops", "--json"], env);
      expect(u.status).toBe(0);
      const body = JSON.parse(u.stdout);
      expect(body).toMatchObject({ account: "ops", plan: "pro", quota: 100_000, per_minute_limit: 500 });
      expect(body.keys.find((k: { id: string }) => k.id === admin.id)).toMatchObject({ used: 0, endpoints: { search: 0, scrape: 0 } });
      expect(cli(["usage", "--account", "ops"], env).stdout).toContain("plan pro");
      expect(cli(["usage", "--account", "nobody"], env).status).toBe(2);
    }, 90_000);

    it("accounts list names every account with its plan, its active keys and this month's use", () => {
      const before = JSON.parse(cli(["accounts", "list", "--json"], env).stdout);
      const spare = createKeyCli(env, "listed", "search");
      createKeyCli(env, "listed", "search");
      expect(cli(["keys", "revoke", spare.id], env).status).toBe(0);
      const r = cli(["accounts", "list", "--json"], env);
      expect(r.status).toBe(0);
      const { period, accounts } = JSON.parse(r.stdout);
      expect(period).toMatch(/^\d{4}-\d{2}$/);
      const names = accounts.map((a: { name: string }) => a.name);
      expect(names).toEqual([...names].sort());
      expect(names).toEqual(expect.arrayContaining(["ops", "listed", ...before.accounts.map((a: { name: string }) => a.name)]));
      expect(accounts.find((a: { name: string }) => a.name === "listed")).toMatchObject({ plan: "free", served_plan: "free", active_keys: 1, used: 0 });
      const ops = accounts.find((a: { name: string }) => a.name === "ops");
      const usage = JSON.parse(cli(["usage", "--account", "ops", "--json"], env).stdout);
      expect(ops).toMatchObject({ plan: usage.plan, active_keys: JSON.parse(cli(["keys", "list", "--account", "ops", "--json"], env).stdout).keys.length });
      expect(ops.used).toBe(usage.keys.reduce((n: number, k: { used: number }) => n + k.used, 0));
      expect(cli(["accounts", "list"], env).stdout).toMatch(/^listed +plan free {2}1 active key {2}used 0 in \d{4}-\d{2}/m);
      const empty = cli(["accounts", "list"], { QUARRY_DATA_DIR: tempDataDir() });
      expect(empty.status).toBe(0);
      expect(empty.stdout).toMatch(/No accounts yet/);
    }, 90_000);
  });

  it("keys list and usage print a key name with control characters (stored before the name rule) as one escaped line", async () => {
    const dir = tempDataDir();
    const config = parseConfig({ QUARRY_DATA_DIR: dir }, "test");
    const built = await buildPorts(config, nodeRuntime, createLogger("silent"), systemClock);
    try {
      await built.ports.keys.putAccount({ name: "legacy", plan: "free", created_at: "2026-11-01T00:00:00Z" });
      await built.ports.keys.createKey({
        id: "key_01LEGACYNAME0000000000000A", account: "legacy", name: "old\nkey_FAKE  \u001b[31mred", hash: "c".repeat(64),
        prefix: "qry_cccc...cccc", scopes: ["search"], created_at: "2026-11-01T00:00:00Z", revoked_at: null,
      });
    } finally {
      await built.close();
    }
    for (const args of [["keys", "list", "--account", "legacy"], ["usage", "--account", "legacy"]]) {
      const r = cli(args, { QUARRY_DATA_DIR: dir });
      expect(r.status, args.join(" ")).toBe(0);
      expect(r.stdout).toContain("old\\u000akey_FAKE  \\u001b[31mred");
      expect(r.stdout).not.toContain("\u001b");
      expect(r.stdout.split("\n").filter((l) => l.includes("key_FAKE"))).toHaveLength(1);
    }
    // --json keeps the name as stored: JSON escapes it already.
    expect(JSON.parse(cli(["keys", "list", "--account", "legacy", "--json"], { QUARRY_DATA_DIR: dir }).stdout).keys[0].name).toBe("old\nkey_FAKE  \u001b[31mred");
  });

  it("serve on an empty database says how to create the first key and prints no secret", async () => {
    const fresh = { QUARRY_DATA_DIR: tempDataDir() };
    const s = await startServer("node", fresh);
    await new Promise((r) => setTimeout(r, 300));
    // The listening line names the process to signal (npx does not pass SIGTERM on).
    expect(JSON.parse(s.output().split("\n").find((l) => l.includes('"quarry listening"'))!).pid).toBe(s.proc.pid);
    expect(s.output()).toContain("quarry keys create");
    expect(s.output()).not.toMatch(/qry_[0-9a-f]{64}/);
    await s.stop();
  }, 60_000);

  it("serve with a bad variable exits 1 naming it", async () => {
    await expect(startServer("node", { QUARRY_DATA_DIR: tempDataDir(), QUARRY_IP_RATE: "lots" })).rejects.toThrow(/QUARRY_IP_RATE/);
  });
});
