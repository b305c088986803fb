/**
 * `quarry usage --account NAME` is the operator's report of the month. A key revoked after it
 * was used dropped out of it with its use: the account's month seemed to have cost less than it
 * did. The report now keeps such a key, marked revoked; a revoked key that was never used this
 * month stays out. Real server, real scrapes of a local page, the real CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";
import { cli, createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";

describe("quarry usage after a key is revoked", () => {
  let site: PageServer;
  let server: Server;
  let env: Record<string, string>;

  beforeAll(async () => {
    site = await startPageServer();
    site.route("/page", send("text/html", "<html><head><title>t</title></head><body><article><p>A page whose scrapes are counted against the key that asked, long enough to be content.</p></article></body></html>"));
    env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_IP_RATE: "off", QUARRY_EGRESS_ALLOW: "127.0.0.1/32" };
    server = await startServer("node", env);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await site?.close();
  });

  const scrape = (key: string) =>
    fetch(`${server.url}/v1/scrape`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ url: `${site.url}/page`, formats: ["text"] }),
    });

  it("keeps a revoked key's use of the month, marked revoked, and leaves out one revoked unused", async () => {
    const kept = createKeyCli(env, "acme", "scrape");
    const used = createKeyCli(env, "acme", "scrape");
    const idle = createKeyCli(env, "acme", "scrape");
    expect((await scrape(kept.key)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await scrape(used.key)).status).toBe(200);
    const revoked = cli(["keys", "revoke", used.id, "--json"], env);
    expect(revoked.status).toBe(0);
    const revokedAt = JSON.parse(revoked.stdout).revoked_at;
    expect(cli(["keys", "revoke", idle.id], env).status).toBe(0);

    const json = cli(["usage", "--account", "acme", "--json"], env);
    expect(json.status).toBe(0);
    const body = JSON.parse(json.stdout);
    const rows = Object.fromEntries(body.keys.map((k: { id: string }) => [k.id, k]));
    expect(Object.keys(rows).sort()).toEqual([kept.id, used.id].sort());
    expect(rows[kept.id]).toMatchObject({ used: 1, remaining: 999, revoked_at: null, endpoints: { scrape: 1 } });
    expect(rows[used.id]).toMatchObject({ used: 3, remaining: 997, revoked_at: revokedAt, endpoints: { scrape: 3 } });
    // The revoked key is listed after the active ones.
    expect(body.keys.map((k: { id: string }) => k.id)).toEqual([kept.id, used.id]);

    const text = cli(["usage", "--account", "acme"], env).stdout;
    const line = text.split("\n").find((l) => l.includes(used.id)) ?? "";
    expect(line).toContain("used 3");
    expect(line).toContain(`revoked ${revokedAt}`);
    expect(text).not.toContain(idle.id);
    // keys list stays the active keys only.
    expect(JSON.parse(cli(["keys", "list", "--account", "acme", "--json"], env).stdout).keys.map((k: { id: string }) => k.id)).toEqual([kept.id]);
  }, 90_000);
});
