/**
 * Downgrading onto data a newer Quarry wrote: the data says which format it holds and which
 * version wrote it (quarry_format), and a Quarry that cannot read that format refuses to start
 * with one line naming both versions, before it changes anything: the server and the CLI alike,
 * on SQLite and on PostgreSQL. Data of its own format or older is marked as its own.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { DATA_FORMAT } from "../../adapters/storage/data-format.ts";
import { packageVersion } from "../../adapters/shared/version.ts";
import { tempDatabase } from "../helpers/pg.ts";
import { cli, createKeyCli, tempDataDir } from "../helpers/server.ts";

const NEWER = DATA_FORMAT + 1;
const refusal = (stderr: string) => {
  const lines = stderr.trim().split("\n");
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toContain(`written by Quarry 9.9.9 (data format ${NEWER})`);
  expect(lines[0]).toContain(`Quarry ${packageVersion()} reads data format ${DATA_FORMAT} and older`);
  expect(stderr).not.toMatch(/\n\s+at /);
};

describe("SQLite data of a newer format", () => {
  it("is marked with this version's format when this version writes it", () => {
    const env = { QUARRY_DATA_DIR: tempDataDir() };
    createKeyCli(env, "acme", "scrape");
    const db = new Database(join(env.QUARRY_DATA_DIR, "quarry.db"), { readonly: true });
    expect(db.prepare("SELECT format, version FROM quarry_format").all()).toEqual([{ format: DATA_FORMAT, version: packageVersion() }]);
    db.close();
  });

  it("stops the server and the CLI with one line naming both versions, and is left as it was", () => {
    const env = { QUARRY_DATA_DIR: tempDataDir(), QUARRY_PORT: "0" };
    const { id } = createKeyCli(env, "acme", "scrape");
    const file = join(env.QUARRY_DATA_DIR, "quarry.db");
    let db = new Database(file);
    db.prepare("UPDATE quarry_format SET format = ?, version = '9.9.9'").run(NEWER);
    db.prepare("DELETE FROM quarry_usage").run();
    db.prepare("DROP TABLE quarry_jobs").run();
    const before = db.prepare("SELECT name FROM sqlite_master ORDER BY name").all();
    db.close();
    for (const args of [["serve"], ["keys", "list", "--account", "acme"], ["keys", "revoke", id]]) {
      const r = cli(args, env);
      expect(r.status, args.join(" ")).toBe(1);
      refusal(r.stderr);
    }
    db = new Database(file, { readonly: true });
    // Nothing was created, changed or revoked.
    expect(db.prepare("SELECT name FROM sqlite_master ORDER BY name").all()).toEqual(before);
    expect(db.prepare("SELECT format FROM quarry_format").get()).toEqual({ format: NEWER });
    expect(JSON.parse((db.prepare("SELECT value FROM quarry_kv WHERE key = ?").get(`key:${id}`) as { value: string }).value).revoked_at).toBeNull();
    db.close();
  });
});

describe("PostgreSQL data of a newer format", () => {
  let db: Awaited<ReturnType<typeof tempDatabase>>;
  afterAll(async () => {
    await db?.drop();
  });

  it("stops the server and the CLI with one line naming both versions, before any of this version's DDL", async () => {
    db = await tempDatabase("format");
    const env = { QUARRY_DATABASE_URL: db.url, QUARRY_PORT: "0" };
    createKeyCli(env, "acme", "scrape");
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      expect((await client.query("SELECT format, version FROM quarry_format")).rows).toEqual([{ format: DATA_FORMAT, version: packageVersion() }]);
      await client.query("UPDATE quarry_format SET format = $1, version = '9.9.9'", [NEWER]);
      // A schema this version would put back if it ran its DDL.
      await client.query("DELETE FROM quarry_schema; DROP FUNCTION quarry_admit(text, bigint, bigint, integer, text, text, integer, text, bigint)");
      for (const args of [["serve"], ["usage", "--account", "acme"]]) {
        const r = cli(args, env);
        expect(r.status, args.join(" ")).toBe(1);
        refusal(r.stderr);
      }
      expect((await client.query("SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'quarry_admit'")).rows[0].n).toBe(0);
      expect((await client.query("SELECT format FROM quarry_format")).rows).toEqual([{ format: NEWER }]);
    } finally {
      await client.end();
    }
  }, 60_000);
});
