/**
 * The README's embedding example, exactly as written, run with plain `node` (no tsx): the
 * package's own exports (`quarry/core`, `quarry/node`) must work for someone who embeds Quarry.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/server.ts";

describe("embedding, as the README shows it", () => {
  it("runs the README's example on plain Node against the compiled exports", () => {
    const built = join(ROOT, "dist/core.js");
    expect(existsSync(built), "dist/ is missing: npm install (or npm run build) compiles it").toBe(true);
    expect(statSync(built).mtimeMs, "dist/ is older than core/: run npm run build").toBeGreaterThanOrEqual(statSync(join(ROOT, "core/app.ts")).mtimeMs);
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Embedding the core"));
    const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toContain('from "quarry/core"');
    // Inside the package directory, so `quarry/...` resolves to this package by its own name.
    const file = join(ROOT, `embed-example-${process.pid}.mjs`);
    writeFileSync(file, code!);
    try {
      const run = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: "utf8", timeout: 30_000, env: { ...process.env, QUARRY_LOG_LEVEL: "silent" } });
      expect(run.stderr).toBe("");
      expect(run.stdout.trim()).toBe("200 ok");
      expect(run.status).toBe(0);
    } finally {
      rmSync(file, { force: true });
    }
  });
});
