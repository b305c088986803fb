import { readFileSync } from "node:fs";

let cached: string | null = null;

/**
 * The version in Quarry's package.json (health, logs, the User-Agent): the nearest one above this
 * module named `quarry`, so it is found from the sources and from the compiled dist/ alike.
 */
export function packageVersion(): string {
  if (cached) return cached;
  for (let dir = new URL(".", import.meta.url); ; dir = new URL("..", dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL("package.json", dir), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "quarry" && pkg.version) return (cached = pkg.version);
    } catch {
      // no package.json here: look one level up
    }
    if (dir.pathname === "/") return (cached = "0.0.0");
  }
}
