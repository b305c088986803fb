/** core/extract must run unchanged on Node, Deno and Bun: no runtime-specific APIs in its sources. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const dir = fileURLToPath(new URL("../../core/extract/", import.meta.url));
const FORBIDDEN = ["node:", "process.", "Deno.", "Bun.", "Buffer"];

function sources(d: string): string[] {
  return readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(d, e.name)) : /\.(ts|js|mjs)$/.test(e.name) ? [join(d, e.name)] : [],
  );
}

describe("core/extract purity", () => {
  const files = sources(dir);

  it("has sources to check", () => {
    expect(files.length).toBeGreaterThan(5);
  });

  it.each(files.map((f) => [f.slice(dir.length), f]))("%s uses no runtime-specific API", (_name, file) => {
    const text = readFileSync(file, "utf8");
    for (const word of FORBIDDEN) expect(text, `${file} contains "${word}"`).not.toContain(word);
  });

  it("imports relative modules with explicit .ts extensions", () => {
    for (const file of files) {
      const imports = [...readFileSync(file, "utf8").matchAll(/from\s+"(\.[^"]+)"/g)].map((m) => m[1]!);
      for (const spec of imports) expect(spec, file).toMatch(/\.ts$/);
    }
  });
});
