/** The core, in process, on Deno and Bun (Node runs it in every other suite). */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/server.ts";

const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);
const script = join(ROOT, "tests/runtimes/core-smoke.ts");
const documents = join(ROOT, "tests/runtimes/documents-smoke.ts");
const runs: Array<[string, string, string[], string[]]> = [
  ["deno", bin("deno"), ["run", "--allow-env", "--allow-read", script], ["run", "--allow-env", "--allow-read", "--allow-sys", documents]],
  ["bun", bin("bun"), [script], [documents]],
];

describe.each(runs)("core on %s", (_name, cmd, args, documentArgs) => {
  it("serves the gateway in process", () => {
    const r = spawnSync(cmd, args, { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(r.stderr + r.stdout).toContain('"failed":[]');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout.trim().split("\n").pop()!)).toEqual({ passed: 8, failed: [] });
  }, 60_000);

  it("reads office documents (mammoth, fflate, linkedom's XML parser) as Node does", () => {
    const r = spawnSync(cmd, documentArgs, { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split("\n").pop()!)).toEqual({
      "report.docx": "# Quarry Field Report", "report.odt": "# Quarry Field Report",
      "inventory.xlsx": "## Stock", "inventory.ods": "## Stock",
      "slides.pptx": "## Crawling with sitemaps", "slides.odp": "## Crawling with sitemaps",
    });
  }, 60_000);
});
