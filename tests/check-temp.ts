/**
 * Proves the suites leave the temp directory as they found it (#18): runs vitest with TMPDIR set
 * to a fresh folder, then lists what is left in it. Exit 0 when nothing is left but tool caches.
 *   npx tsx tests/check-temp.ts                        # every suite
 *   npx tsx tests/check-temp.ts tests/scale tests/cli  # some (arguments go to vitest run)
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Caches tools keep across runs on purpose (tsx's compile cache, a folder per user id); they exist
// in the real temp directory once and are reused, so they are not leftovers of a run.
const CACHES = [/^tsx-\d+$/];

const root = mkdtempSync(join(tmpdir(), "quarry-tmpcheck-"));
chmodSync(root, 0o1777); // like /tmp: the private PostgreSQL runs as the postgres user
const run = spawnSync("npx", ["vitest", "run", ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { ...process.env, TMPDIR: root, TMP: root, TEMP: root },
});

function size(path: string): number {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((n, e) => n + size(join(path, e)), 0);
}

const left = readdirSync(root).filter((e) => !CACHES.some((c) => c.test(e)));
const bytes = left.reduce((n, e) => n + size(join(root, e)), 0);
console.log(`\ntemp check: vitest exited ${run.status}; ${left.length} entries left in the temp directory (${(bytes / 1e6).toFixed(1)} MB)`);
for (const e of left) console.log(`  ${e}`);
rmSync(root, { recursive: true, force: true });
process.exit(left.length ? 1 : 0);
