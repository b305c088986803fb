/**
 * Which test files start processes of their own, read from their source: a file that imports
 * node:child_process, playwright-core or the browser adapter, directly or through a module of tests/
 * it imports, runs in the `processes` project (a module that only runs a tool to completion, such as
 * openssl, says so with a line `test-kind: in-process` and does not count) (a child process per file); every other file runs in
 * the `in-process` project (worker threads that keep their modules). New tests need no list to
 * land in the right one.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const TESTS = join(ROOT, "tests");
const MARKERS = /from\s+["'](?:node:)?child_process["']|["']playwright-core["']|adapters\/browser\//;
// Type-only imports load nothing.
const IMPORTS = /(?:import|export)\s(?!type\s)[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/gs;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "fixtures" || e.name === "artifacts" ? [] : testFiles(path);
    return e.name.endsWith(".test.ts") ? [path] : [];
  });
}

export function startsProcesses(file: string, seen = new Map<string, boolean>()): boolean {
  const known = seen.get(file);
  if (known !== undefined) return known;
  seen.set(file, false); // an import cycle adds nothing
  const source = readFileSync(file, "utf8");
  let found = MARKERS.test(source) && !/test-kind: in-process/.test(source);
  for (const m of source.matchAll(IMPORTS)) {
    if (found) break;
    const target = resolve(dirname(file), m[1] ?? m[2]!);
    // Only the suite's own modules: the app's modules are what runs in-process.
    if (target.startsWith(TESTS) && existsSync(target)) found = startsProcesses(target, seen);
  }
  seen.set(file, found);
  return found;
}

/** The test files (relative to the repository) that start processes. */
export function processTestFiles(): string[] {
  const seen = new Map<string, boolean>();
  return testFiles(TESTS)
    .filter((f) => startsProcesses(f, seen))
    .map((f) => relative(ROOT, f));
}
