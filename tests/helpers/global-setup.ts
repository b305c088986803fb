/**
 * Runs once before the suite (vitest globalSetup): builds dist/ when it is missing or older than a
 * source file, so every `quarry` process the tests start runs the compiled build (bin/quarry.js
 * would otherwise load the TypeScript sources through tsx in each process, seconds apiece).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(new URL("../..", import.meta.url).pathname);

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p));
    else if (e.name.endsWith(".ts")) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

export default function setup(): void {
  const built = join(ROOT, "dist", "cli.js");
  const sources = Math.max(newest(join(ROOT, "core")), newest(join(ROOT, "adapters")));
  if (existsSync(built) && statSync(built).mtimeMs >= sources) return;
  execFileSync(process.execPath, [join(ROOT, "bin", "build.mjs")], { cwd: ROOT, stdio: "inherit" });
}
