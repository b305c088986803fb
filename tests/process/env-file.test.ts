/**
 * `.env` in the working directory on each runtime (README, "Configuration"): the file's values are
 * read, a variable the environment sets wins over the file, and a start without a file says nothing
 * about one (Deno's `--env-file` flag warned on every such start).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, type Runtime } from "../helpers/server.ts";

const BIN = join(ROOT, "node_modules", ".bin");
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function command(runtime: Runtime): [string, string[]] {
  if (runtime === "node") return [process.execPath, [join(ROOT, "bin/quarry.js"), "serve"]];
  if (runtime === "deno") return [join(BIN, "deno"), ["run", "-A", join(ROOT, "adapters/deno/server.ts")]];
  return [join(BIN, "bun"), [join(ROOT, "adapters/bun/server.ts")]];
}

/** Starts the runtime's server in `cwd` until it listens (or exits); returns its output and stops it. */
async function run(runtime: Runtime, cwd: string, env: Record<string, string>): Promise<{ out: string; listened: boolean }> {
  const [cmd, args] = command(runtime);
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("QUARRY_"))) as Record<string, string>;
  const proc: ChildProcess = spawn(cmd, args, { cwd, env: { ...base, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const until = Date.now() + 40_000;
  while (!/"url":"http/.test(out) && proc.exitCode === null && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  const listened = /"url":"http/.test(out);
  if (proc.exitCode === null) {
    proc.kill("SIGTERM");
    await new Promise((r) => proc.once("exit", r));
  }
  return { out, listened };
}

describe.each<Runtime>(["node", "deno", "bun"])("a .env file on %s", (runtime) => {
  it("is read, and the environment wins over it", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "quarry-envfile-"));
    dirs.push(cwd);
    const fromFile = join(cwd, "data-from-env-file");
    // The file names a data dir (only the file sets it) and a port the environment overrides:
    // were the file to win, "not-a-port" would stop start-up.
    writeFileSync(join(cwd, ".env"), `QUARRY_DATA_DIR=${fromFile}\nQUARRY_PORT=not-a-port\n`);
    const r = await run(runtime, cwd, { QUARRY_PORT: "0", QUARRY_HOST: "127.0.0.1" });
    expect(r.listened, r.out).toBe(true);
    expect(existsSync(fromFile), `the server used the file's QUARRY_DATA_DIR:\n${r.out}`).toBe(true);
  }, 60_000);

  it("is not asked for when there is none", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "quarry-envfile-"));
    dirs.push(cwd);
    const r = await run(runtime, cwd, { QUARRY_PORT: "0", QUARRY_HOST: "127.0.0.1", QUARRY_DATA_DIR: join(cwd, "data") });
    expect(r.listened, r.out).toBe(true);
    expect(r.out).not.toMatch(/env-file|\.env\b|Warning/i);
  }, 60_000);
});
