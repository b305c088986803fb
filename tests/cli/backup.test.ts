/**
 * `quarry backup FILE` copies the embedded SQLite database while the server runs, and a server
 * started on the copy has everything the first one had written: accounts and keys (a revoked one
 * still revoked), the month's usage, a finished crawl with its pages, a collection that still answers
 * its search (api.md §11: the index lives in the same database). What it refuses, it refuses
 * before writing anything, with the CLI's exit codes.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { allPages, json, waitFor } from "../helpers/job-http.ts";
import { cli, createKeyCli, startServer, tempDataDir, type Server } from "../helpers/server.ts";
import { startTestSite, type TestSite } from "../helpers/test-site.ts";
import { DATA_FORMAT } from "../../adapters/storage/data-format.ts";

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => {});
  cleanup = [];
});

const base = { QUARRY_EGRESS_ALLOW: "127.0.0.1/32", QUARRY_IP_RATE: "off" };

async function serve(env: Record<string, string>): Promise<Server> {
  const server = await startServer("node", env);
  cleanup.push(() => server.stop("SIGTERM"));
  return server;
}

describe("quarry backup", () => {
  it("copies the database while the server runs; a server started on the copy has the keys, the usage, the crawl and the collection", async () => {
    const site: TestSite = await startTestSite({});
    cleanup.push(() => site.close());
    const env = { ...base, QUARRY_DATA_DIR: tempDataDir() };
    const server = await serve(env);
    const { key } = createKeyCli(env, "acme", "scrape,search");
    const revoked = createKeyCli(env, "acme", "scrape");
    expect(cli(["keys", "revoke", revoked.id], env).status).toBe(0);
    const scraped = await fetch(`${server.url}/v1/scrape`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ url: `${site.ipUrl}/about` }) });
    expect(scraped.status).toBe(200);
    const started = await json(`${server.url}/v1/crawl`, key, { method: "POST", body: JSON.stringify({ url: `${site.ipUrl}/`, max_depth: 1, limit: 5 }) });
    const crawl = await waitFor(`${server.url}/v1/crawl/${started.id}`, key, (j) => j.status === "completed", 60_000);
    expect(crawl.completed).toBeGreaterThan(1);
    const pages = await allPages(crawl, server.url, key);
    // A collection: a page scraped into it, and the account's own document.
    expect((await json(`${server.url}/v1/collections`, key, { method: "POST", body: JSON.stringify({ name: "kept" }) })).name).toBe("kept");
    const into = await json(`${server.url}/v1/scrape`, key, { method: "POST", body: JSON.stringify({ url: `${site.ipUrl}/about`, collection: "kept" }) });
    expect(into.meta.collection.outcome).toBe("added");
    const own = await json(`${server.url}/v1/collections/kept/documents`, key, { method: "POST", body: JSON.stringify({ documents: [{ id: "memo", title: "Backup memo", text: "The quarterly backup drill restores the archive onto a spare machine." }] }) });
    expect(own.added).toEqual(["memo"]);
    const searchKept = (url: string) => json(`${url}/v1/collections/kept/search`, key, { method: "POST", body: JSON.stringify({ query: "backup drill spare machine" }) });
    const foundBefore = await searchKept(server.url);
    expect(foundBefore.results.map((r: { id: string }) => r.id)).toEqual(["memo"]);
    const keptInfo = await json(`${server.url}/v1/collections/kept`, key);
    const usage = await json(`${server.url}/v1/usage`, key);
    // The last write before the copy: still in the -wal file, not yet in quarry.db itself.
    const last = createKeyCli(env, "late", "search");
    expect(readdirSync(env.QUARRY_DATA_DIR)).toContain("quarry.db-wal");

    const out = join(tempDataDir(), "copy.db");
    const made = cli(["backup", out, "--json"], env);
    expect(made.status, made.stderr).toBe(0);
    const result = JSON.parse(made.stdout);
    expect(result).toMatchObject({ file: out, format: DATA_FORMAT });
    expect(result.bytes).toBeGreaterThan(0);
    expect(readdirSync(join(out, "..")).filter((f) => f.includes("partial"))).toEqual([]);
    // The server went on serving meanwhile.
    expect((await fetch(`${server.url}/v1/crawl/${started.id}`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);

    const restored = { ...base, QUARRY_DATA_DIR: tempDataDir() };
    copyFileSync(out, join(restored.QUARRY_DATA_DIR, "quarry.db"));
    const second = await serve(restored);
    const again = await json(`${second.url}/v1/crawl/${started.id}`, key);
    expect(again).toMatchObject({ status: "completed", completed: crawl.completed, failed: crawl.failed });
    expect((await allPages(again, second.url, key)).map((p) => p.url)).toEqual(pages.map((p) => p.url));
    const usageAfter = await json(`${second.url}/v1/usage`, key);
    expect(usageAfter.endpoints).toEqual(usage.endpoints);
    expect(usageAfter.used).toBe(usage.used);
    expect((await fetch(`${second.url}/v1/usage`, { headers: { authorization: `Bearer ${revoked.key}` } })).status).toBe(401);
    expect((await fetch(`${second.url}/v1/usage`, { headers: { authorization: `Bearer ${last.key}` } })).status).toBe(200);
    // The collection came along: the same documents, passages and bytes, and the same answer.
    expect(await json(`${second.url}/v1/collections/kept`, key)).toEqual(keptInfo);
    const foundAfter = await searchKept(second.url);
    expect(foundAfter.results).toEqual(foundBefore.results);
    expect(foundAfter.results[0].passages[0].text).toMatch(/quarterly backup drill/);
  }, 120_000);

  it("refuses, before writing anything: an existing file (exit 2), a missing directory (exit 2), PostgreSQL data (exit 2, pointing to pg_dump); no database is exit 1", () => {
    const env = { QUARRY_DATA_DIR: tempDataDir() };
    createKeyCli(env, "acme", "search");
    const dir = tempDataDir();
    const taken = join(dir, "taken.db");
    writeFileSync(taken, "keep me");
    const exists = cli(["backup", taken], env);
    expect([exists.status, exists.stdout]).toEqual([2, ""]);
    expect(exists.stderr).toContain("already exists");
    expect(readFileSync(taken, "utf8")).toBe("keep me");
    const nowhere = cli(["backup", join(dir, "no", "such", "dir", "copy.db")], env);
    expect(nowhere.status).toBe(2);
    expect(nowhere.stderr).toContain("is not a directory");
    const pg = cli(["backup", join(dir, "pg.db")], { ...env, QUARRY_DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test" });
    expect(pg.status).toBe(2);
    expect(pg.stderr).toContain("pg_dump");
    const empty = tempDataDir();
    const none = cli(["backup", join(dir, "none.db")], { QUARRY_DATA_DIR: empty });
    expect(none.status).toBe(1);
    expect(none.stderr).toContain("nothing to back up");
    expect(readdirSync(empty)).toEqual([]);
    expect(cli(["backup"], env).status).toBe(2);
    expect(cli(["backup", join(dir, "a.db"), join(dir, "b.db")], env).status).toBe(2);
    expect(readdirSync(dir)).toEqual(["taken.db"]);
    mkdirSync(join(dir, "sub"));
    expect(existsSync(join(dir, "sub", "ok.db"))).toBe(false);
    expect(cli(["backup", join(dir, "sub", "ok.db")], env).status).toBe(0);
    expect(existsSync(join(dir, "sub", "ok.db"))).toBe(true);
  }, 90_000);
});
