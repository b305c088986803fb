import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/** The video folders of core/ run on Node, Deno and Bun: no runtime-specific API (architecture.md). */
const FORBIDDEN = [/\bnode:/, /\bprocess\./, /\bDeno\./, /\bBun\./, /\bBuffer\b/];
const DIRS = ["core/backends/youtube", "core/budget", "core/operations/video"];

describe("video core purity", () => {
  for (const dir of DIRS) {
    it(`${dir} uses no runtime-specific API and imports with .ts extensions`, () => {
      const root = new URL(`../../${dir}/`, import.meta.url);
      const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) {
        const text = readFileSync(new URL(file, root), "utf8");
        for (const re of FORBIDDEN) expect(text, `${dir}/${file} matches ${re}`).not.toMatch(re);
        for (const m of text.matchAll(/from\s+"(\.[^"]+)"/g)) expect(m[1], `${dir}/${file}`).toMatch(/\.ts$/);
        expect(text.split("\n").length, `${dir}/${file} stays small`).toBeLessThan(300);
      }
    });
  }
});
