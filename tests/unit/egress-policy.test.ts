/**
 * The unguarded network port stays out of reach: in core/ only the services (which wrap it in the
 * egress policy, core/net/egress.ts) may touch `ports.fetch`; everything else gets `services.fetch`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const CORE = fileURLToPath(new URL("../../core/", import.meta.url));
const ALLOWED = new Set(["services.ts", "ports.ts"]);

describe("egress policy", () => {
  it("no core module but the services takes the raw fetch port", () => {
    const offenders: string[] = [];
    for (const file of readdirSync(CORE, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"))) {
      if (ALLOWED.has(file) || file.startsWith("dashboard/")) continue;
      const src = readFileSync(CORE + file, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      if (/\bports\.fetch\b|\{[^}]*\bfetch\b[^}]*\}\s*=\s*(deps\.)?ports\b|globalThis\.fetch\b/.test(src)) offenders.push(`${file}: the raw fetch port`);
    }
    expect(offenders).toEqual([]);
  });
});
