/**
 * Creates QUARRY_DATA_DIR and its missing parents one level at a time.
 *
 * Node's `mkdirSync(dir, { recursive: true })` never returns when a parent exists but cannot
 * hold the child (a path under /proc or /sys answers ENOENT for the child and EEXIST for the
 * parent, and Node's loop retries them forever at full CPU). Walking down by hand turns that
 * into one error, and every failure names the variable.
 */
import { lstatSync, mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

export class DataDirError extends Error {}

function reason(err: unknown): string {
  if (typeof err === "string") return err;
  const code = (err as { code?: string } | null)?.code;
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EROFS") return "the file system is read-only";
  if (code === "ENOTDIR" || code === "EEXIST") return "a part of the path is a file, not a directory";
  if (code === "ENOENT") return "the file system there does not allow creating it";
  return err instanceof Error ? err.message : String(err);
}

/** Ensures `dir` exists as a directory; throws DataDirError naming QUARRY_DATA_DIR otherwise. */
export function makeDataDir(dir: string): void {
  const fail = (err: unknown): never => {
    throw new DataDirError(`QUARRY_DATA_DIR: cannot use "${dir}" as the data directory: ${reason(err)}`);
  };
  const missing: string[] = [];
  let at = resolve(dir);
  for (;;) {
    let isDir: boolean;
    try {
      isDir = statSync(at).isDirectory();
    } catch (err) {
      if ((err as { code?: string }).code !== "ENOENT") return fail(err);
      const parent = dirname(at);
      if (parent === at) return fail(err);
      missing.unshift(at);
      at = parent;
      continue;
    }
    if (!isDir) return fail(Object.assign(new Error("not a directory"), { code: "ENOTDIR" }));
    break;
  }
  for (const path of missing) {
    try {
      mkdirSync(path);
    } catch (err) {
      // Another process may have made it meanwhile.
      if ((err as { code?: string }).code === "EEXIST") {
        if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) continue;
        if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) fail(`${path} is a link to a directory that does not exist`);
      }
      fail(err);
    }
  }
}
