/**
 * A data directory or database the server cannot use stops start-up on every runtime with one
 * line on stderr naming the variable and exit code 1: no hang, no stack trace.
 */
import { spawn } from "node:child_process";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDatabase } from "../helpers/pg.ts";
import { command, tempDataDir, type Runtime } from "../helpers/server.ts";
import { onCleanup } from "../helpers/temp.ts";

function start(runtime: Runtime, env: Record<string, string>): Promise<{ code: number | null; stderr: string; ms: number }> {
  const [cmd, args] = command(runtime);
  const t0 = Date.now();
  const proc = spawn(cmd, args, { env: { ...process.env, QUARRY_HOST: "127.0.0.1", QUARRY_PORT: "0", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  onCleanup(() => void (proc.exitCode === null && proc.signalCode === null && proc.kill("SIGKILL")));
  let stderr = "";
  proc.stderr!.on("data", (d) => (stderr += d));
  const timer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
  return new Promise((res) => proc.on("exit", (code) => (clearTimeout(timer), res({ code, stderr, ms: Date.now() - t0 }))));
}

/** stderr without Deno's note about a missing .env file. */
const lines = (stderr: string) => stderr.split("\n").filter((l) => l && !/--env-file|\.env/.test(l));

describe("start-up on a data directory or database that cannot be used", () => {
  it("a data directory under /proc fails at once (Node's recursive mkdir spins there forever)", async () => {
    const r = await start("node", { QUARRY_DATA_DIR: "/proc/quarry-no-such-dir" });
    expect(r.code).toBe(1);
    expect(r.ms).toBeLessThan(15_000);
    expect(lines(r.stderr)).toEqual(['quarry: QUARRY_DATA_DIR: cannot use "/proc/quarry-no-such-dir" as the data directory: the file system there does not allow creating it']);
  }, 30_000);

  it("a file or a dangling link in the path is named as such", async () => {
    const dir = tempDataDir();
    writeFileSync(join(dir, "file"), "");
    symlinkSync(join(dir, "gone"), join(dir, "link"));
    const file = await start("node", { QUARRY_DATA_DIR: join(dir, "file", "data") });
    expect(file.code).toBe(1);
    expect(lines(file.stderr)).toEqual([`quarry: QUARRY_DATA_DIR: cannot use "${join(dir, "file", "data")}" as the data directory: a part of the path is a file, not a directory`]);
    const link = await start("node", { QUARRY_DATA_DIR: join(dir, "link", "data") });
    expect(lines(link.stderr)).toEqual([`quarry: QUARRY_DATA_DIR: cannot use "${join(dir, "link", "data")}" as the data directory: ${join(dir, "link")} is a link to a directory that does not exist`]);
  }, 30_000);

  it("a proxy URL Quarry cannot use is named by its variable on every runtime, not a stack trace", async () => {
    for (const runtime of ["node", "bun"] as const) {
      const r = await start(runtime, { QUARRY_DATA_DIR: tempDataDir(), HTTPS_PROXY: "socks5://proxy.example:1080" });
      expect(r.code, runtime).toBe(1);
      expect(lines(r.stderr), runtime).toEqual(["quarry: invalid configuration: HTTPS_PROXY: socks5:// proxies are not supported; use an http:// proxy URL (https is tunnelled through it with CONNECT)"]);
    }
  }, 60_000);

  it("a QUARRY_CHROMIUM_PATH that is not an executable stops start-up naming it", async () => {
    const notExecutable = join(tempDataDir(), "chromium");
    writeFileSync(notExecutable, "not a browser", { mode: 0o644 });
    for (const path of ["/nonexistent/chromium", notExecutable]) {
      const r = await start("node", { QUARRY_DATA_DIR: tempDataDir(), QUARRY_CHROMIUM_PATH: path });
      expect(r.code, path).toBe(1);
      expect(lines(r.stderr), path).toEqual([`quarry: invalid configuration: QUARRY_CHROMIUM_PATH: "${path}" is not an executable file (unset it to use the usual places)`]);
    }
  }, 60_000);

  it("a QUARRY_REDIS_URL that Redis refuses (a database number it does not have) stops start-up naming it, not a server on database 0", async () => {
    const db = await tempDatabase("redisurl");
    try {
      const base = process.env.QUARRY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
      const r = await start("node", { QUARRY_DATABASE_URL: db.url, QUARRY_REDIS_URL: `${base.replace(/\/\d*$/, "")}/9999` });
      expect(r.code).toBe(1);
      expect(lines(r.stderr)).toEqual(["quarry: invalid configuration: QUARRY_REDIS_URL: Redis refused it: ERR DB index is out of range"]);
      expect(r.ms).toBeLessThan(15_000); // nothing (the PostgreSQL pool) keeps the process alive
    } finally {
      await db.drop();
    }
  }, 60_000);

  for (const runtime of ["node", "deno", "bun"] as const) {
    it(`${runtime}: an unreachable PostgreSQL or a bad data directory is one line naming the variable, no stack trace`, async () => {
      const pg = await start(runtime, { QUARRY_DATABASE_URL: "postgres://quarry:secret@127.0.0.1:1/quarry" });
      expect(pg.code).toBe(1);
      expect(lines(pg.stderr)).toHaveLength(1);
      expect(lines(pg.stderr)[0]).toMatch(/^quarry: cannot open the PostgreSQL database at QUARRY_DATABASE_URL \(postgres:\/\/quarry:\*\*\*@127\.0\.0\.1:1\/quarry\): .*ECONNREFUSED/);
      const dir = tempDataDir();
      writeFileSync(join(dir, "file"), "");
      const bad = await start(runtime, { QUARRY_DATA_DIR: join(dir, "file") });
      expect(bad.code).toBe(1);
      expect(lines(bad.stderr)).toEqual([`quarry: QUARRY_DATA_DIR: cannot use "${join(dir, "file")}" as the data directory: a part of the path is a file, not a directory`]);
    }, 60_000);
  }
});
