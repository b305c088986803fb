/**
 * Everything a test file makes outside itself (temp folders, private database servers, spawned
 * servers) is registered here and undone after the file, passed or failed: tests/setup.ts runs
 * cleanUp() as the last afterAll of every file. Last registered, first undone, so a server is
 * stopped before the folder it writes to goes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const cleanups: Array<() => unknown> = [];

export function onCleanup(fn: () => unknown): void {
  cleanups.push(fn);
}

/** A fresh folder in the temp directory, removed after the test file. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export async function cleanUp(): Promise<void> {
  while (cleanups.length) {
    const fn = cleanups.pop()!;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      // A hung undo (a process that never reports its exit) must not keep the folders around.
      await Promise.race([fn(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("timed out after 15 s")), 15_000)))]);
    } catch (err) {
      // One failed undo must not keep the others from running.
      console.warn(`test cleanup failed: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }
}
