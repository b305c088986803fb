/** core/ must run on any runtime: it may not import one (architecture.md, Habits). */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") || p.endsWith(".tsx") ? [p] : [];
  });
}

const FORBIDDEN = [/from\s+["']node:/, /import\(\s*["']node:/, /\bDeno\./, /\bBun\./, /\bprocess\./, /\brequire\(/, /\bBuffer\b/];

describe("core purity", () => {
  const all = files(new URL("../../core", import.meta.url).pathname);
  it("finds the core sources", () => expect(all.length).toBeGreaterThan(10));
  it.each(all)("%s imports no runtime", (file) => {
    const src = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
    for (const re of FORBIDDEN) expect(src, `${file} matches ${re}`).not.toMatch(re);
  });
});
