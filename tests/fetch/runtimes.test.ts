/**
 * The same guarantees checked on Deno and Bun themselves: runtime-smoke.ts runs under each and
 * reports one line per check (node:http's guarded lookup on that runtime, the portable fetcher,
 * pinning, the gzip bomb, TLS). Local servers only.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(new URL("../..", import.meta.url).pathname);
const SCRIPT = join(ROOT, "tests/fetch/runtime-smoke.ts");
const RUNTIMES: [string, string, string[]][] = [
  ["deno", join(ROOT, "node_modules/.bin/deno"), ["run", "-A", SCRIPT]],
  ["bun", join(ROOT, "node_modules/.bin/bun"), [SCRIPT]],
];

function run(cmd: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const proc = spawn(cmd, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    proc.stdout.on("data", (d) => (out += d));
    proc.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => proc.kill(), 110_000);
    proc.on("close", (code) => {
      clearTimeout(timer);
      done({ code, out });
    });
  });
}

describe.each(RUNTIMES)("on %s", (name, bin, args) => {
  it("every check of runtime-smoke.ts holds", { timeout: 120_000 }, async () => {
    // Deno and Bun are devDependencies: a missing one is a broken install, not a reason to skip.
    expect(existsSync(bin), `${bin} is missing: npm install puts it there (devDependency ${name})`).toBe(true);
    const { code, out } = await run(bin, args);
    const results = out
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { check: string; ok: boolean; detail?: string });
    expect(code, out).toBe(0);
    expect(results.length, out).toBeGreaterThanOrEqual(30);
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(results.map((r) => r.check)).toContain(`portable pins http (${name})`);
  });
});
