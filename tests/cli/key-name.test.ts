/**
 * `quarry keys create --name` takes the names POST /v1/keys takes, and only those. It took a
 * name with a line break, which then printed as a line of its own in `quarry keys list` (a forged
 * key row), and it counted length in UTF-16 units, so 60 emoji (60 characters, which the API
 * takes) were "over 100". Both now follow the API's rule, on a real server and the real CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

describe("quarry keys create --name", () => {
  let env: Record<string, string>;
  let server: Server;
  let admin: string;
  beforeAll(async () => {
    env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_IP_RATE: "off" };
    admin = createKeyCli(env, "acme", "search,keys").key;
    server = await startServer("node", env);
  }, 60_000);
  afterAll(() => server?.stop());

  const apiCreate = async (name: string) =>
    fetch(`${server.url}/v1/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ name, scopes: ["search"] }),
    });
  const cliCreate = (name: string) => cli(["keys", "create", "--account", "acme", "--scopes", "search", "--name", name, "--json"], env);

  it("refuses what the API refuses (control characters, over 100 characters), with exit 2 and the API's reason", async () => {
    for (const name of ["evil\nkey_01FAKE  qry_0000...0000  keys", "tab\there", "bell\u0007", "x".repeat(101), " ".repeat(3)]) {
      const api = await apiCreate(name);
      expect(api.status, JSON.stringify(name)).toBe(400);
      const reason: string = (await api.json()).error.details[0].message;
      const r = cliCreate(name);
      expect(r.status, JSON.stringify(name)).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(`quarry: --name: ${reason}\n`);
    }
    const names = JSON.parse(cli(["keys", "list", "--account", "acme", "--json"], env).stdout).keys.map((k: { name: string }) => k.name);
    expect(names).toEqual(["acme-search,keys"]);
    expect(cli(["keys", "list", "--account", "acme"], env).stdout.trim().split("\n")).toHaveLength(1);
  });

  it("takes what the API takes: 100 characters counted as characters, emoji included, trimmed", async () => {
    for (const name of ["🔑".repeat(60), "é".repeat(100), "  ci bot  "]) {
      expect((await apiCreate(name)).status, name).toBe(201);
      const r = cliCreate(name);
      expect(r.status, `${name}: ${r.stderr}`).toBe(0);
      expect(JSON.parse(r.stdout).name).toBe(name.trim());
    }
  });
});
