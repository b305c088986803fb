import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/** The social core runs on any runtime: Web standards only, explicit .ts imports (architecture.md). */
const DIRS = ["core/backends/social", "core/operations/social"];
const FORBIDDEN = [/from\s+["']node:/, /import\(\s*["']node:/, /\bprocess\./, /\bDeno\./, /\bBun\./, /\bBuffer\b/, /\brequire\(/, /:\s*any\b|as any\b|<any>/];

describe("social core purity", () => {
  for (const dir of DIRS) {
    const root = new URL(`../../${dir}/`, import.meta.url);
    const files = readdirSync(root).filter((f) => f.endsWith(".ts"));
    it(`${dir} has sources`, () => expect(files.length).toBeGreaterThan(3));
    it.each(files)(`${dir}/%s uses no runtime API, no any, and .ts relative imports`, (file) => {
      const text = readFileSync(new URL(file, root), "utf8");
      const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      for (const re of FORBIDDEN) expect(code, `${file} matches ${re}`).not.toMatch(re);
      for (const [, spec] of code.matchAll(/from\s+["'](\.[^"']*)["']/g)) expect(spec, file).toMatch(/\.ts$/);
      expect(file).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*\.ts$/);
      expect(text.split("\n").length, `${file} is under 300 lines`).toBeLessThan(300);
    });
  }
});
