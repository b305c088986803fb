import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/** core/ runs on Node, Deno, Bun and inside other services: no runtime-specific APIs (architecture.md). */
const FORBIDDEN = ["node:", "process.", "Deno.", "Bun.", "Buffer"];
const DIRS = ["core/backends", "core/ranking"];

function tsFiles(dir: string): string[] {
  const root = new URL(`../../${dir}/`, import.meta.url);
  return readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => new URL(name, root).pathname);
}

describe("core purity", () => {
  for (const dir of DIRS) {
    it(`${dir} uses no runtime-specific API`, () => {
      const files = tsFiles(dir);
      expect(files.length).toBeGreaterThan(0);
      const offences = files.flatMap((file) => {
        const text = readFileSync(file, "utf8");
        return FORBIDDEN.filter((token) => text.includes(token)).map((token) => `${file}: ${token}`);
      });
      expect(offences).toEqual([]);
    });
  }
});
