/** The core, in process, on Deno and Bun (Node runs it in every other suite). */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/server.ts";

const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);
const script = join(ROOT, "tests/runtimes/core-smoke.ts");
const runs: Array<[string, string, string[]]> = [
  ["deno", bin("deno"), ["run", "--allow-env", "--allow-read", script]],
  ["bun", bin("bun"), [script]],
];

describe.each(runs)("core on %s", (_name, cmd, args) => {
  it("serves the gateway in process", () => {
    const r = spawnSync(cmd, args, { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(r.stderr + r.stdout).toContain('"failed":[]');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout.trim().split("\n").pop()!)).toEqual({ passed: 8, failed: [] });
  }, 60_000);
});
