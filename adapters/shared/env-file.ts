/**
 * `.env` in the working directory, read as Node's `--env-file` reads it: the file fills in what
 * the environment leaves unset, and a variable the environment sets wins. Node's CLI and the Deno
 * adapter read it here (Deno's own `process.loadEnvFile` lets the file win, and its `--env-file`
 * flag warns on every start without a file); Bun reads `.env` by itself.
 */
import { existsSync } from "node:fs";
import process from "node:process";

/** Loads `path` if it exists; returns a one-line warning when this runtime cannot read it, else null. */
export function loadEnvFile(path = ".env"): string | null {
  if (!existsSync(path)) return null;
  const load = (process as { loadEnvFile?: (path: string) => void }).loadEnvFile;
  if (typeof load !== "function") {
    return `${path} is not read: Node.js ${process.version} cannot load it (20.12 or newer can); export its variables instead`;
  }
  const before = { ...process.env };
  load(path);
  for (const [name, value] of Object.entries(before)) if (value !== undefined && process.env[name] !== value) process.env[name] = value;
  return null;
}
