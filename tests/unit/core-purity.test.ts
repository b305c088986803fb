/**
 * core/ runs unchanged on Node, Deno, Bun and inside other services (architecture.md, Habits):
 * Web standards only. tsconfig gives core `@types/node` too, so the type checker alone would
 * let a Node global slip in; this test is the guard, for every file under core/. Which way core's
 * imports may point (layers, no cycles, nothing from adapters/) is tests/unit/layers.test.ts's.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const CORE = fileURLToPath(new URL("../../core/", import.meta.url));

const FORBIDDEN: Array<[RegExp, string]> = [
  [/from\s+["']node:|import\(\s*["']node:/, "a node: import"],
  [/\bDeno\./, "Deno's API"],
  [/\bBun\./, "Bun's API"],
  [/\bprocess\./, "process"],
  [/\brequire\(/, "require()"],
  [/\bBuffer\b/, "Buffer (use Uint8Array)"],
  [/\bNodeJS\./, "a NodeJS.* type"],
  [/\b__dirname\b|\b__filename\b/, "CommonJS paths"],
  [/\bsetImmediate\b|\bglobal\./, "a Node-only global"],
  [/:\s*any\b|\bas any\b|<any>/, "an `any` type"],
];

/** Files allowed past 300 lines, and why. */
const LONG_FILES: Record<string, string> = {
  "dashboard/script.ts": "the dashboard's browser script, shipped as one string",
  "net/address-policy.ts": "the whole address table (IPv4 and IPv6 special ranges) in one place",
};

const files = readdirSync(CORE, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts")).sort();

/** Source without comments, so a comment may name what the code may not use. */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");

describe("core purity", () => {
  it("finds the core sources", () => expect(files.length).toBeGreaterThan(100));

  it.each(files)("%s uses Web standards only", (file) => {
    const src = code(readFileSync(CORE + file, "utf8"));
    for (const [re, what] of FORBIDDEN) expect(src, `${file} uses ${what}`).not.toMatch(re);
  });

  it.each(files)("%s imports relative modules with explicit .ts extensions", (file) => {
    const src = code(readFileSync(CORE + file, "utf8"));
    for (const [, spec] of src.matchAll(/from\s+["'](\.[^"']*)["']/g)) expect(spec, file).toMatch(/\.ts$/);
  });

  it.each(files)("%s is kebab-case and small", (file) => {
    expect(file.split("/").pop()).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*\.ts$/);
    if (!LONG_FILES[file]) expect(readFileSync(CORE + file, "utf8").split("\n").length, `${file} is under 300 lines`).toBeLessThan(300);
  });
});
