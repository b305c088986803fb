/**
 * The order test files start in: the longest first, from the seconds each took in a measured run
 * (`tests/durations.json`), so that a long file never starts near the end and sets the wall time
 * alone. Vitest's own order does this only from its cache (node_modules/.vite), which a fresh clone
 * and CI do not have: there it starts the largest files first, and a 95 s file could start last.
 *
 * The in-process project still goes first, as vitest orders projects: its files share worker threads
 * only while they follow each other in the queue. A file missing from the table (a new one) takes
 * its time from vitest's cache when there is one, and otherwise starts first in its project, as
 * vitest starts unknown files first.
 *
 * `npx tsx tests/helpers/durations.ts REPORT.json` rewrites the table from a JSON report of a whole run.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const DURATIONS = join(ROOT, "tests", "durations.json");

/** Seconds per test file (relative to the repository), as the last measured run took them. */
export function knownDurations(): Record<string, number> {
  if (!existsSync(DURATIONS)) return {};
  return (JSON.parse(readFileSync(DURATIONS, "utf8")) as { seconds: Record<string, number> }).seconds;
}

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const known = knownDurations();
    const seconds = (spec: TestSpecification): number => {
      const file = relative(ROOT, spec.moduleId).split("\\").join("/");
      if (file in known) return known[file]!;
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)?.duration;
      return cached ? cached / 1000 : Number.POSITIVE_INFINITY;
    };
    const projectOrder = (spec: TestSpecification) => (spec.project.name === "in-process" ? 0 : 1);
    return files
      .map((spec) => ({ spec, project: projectOrder(spec), seconds: seconds(spec) }))
      .sort((a, b) => a.project - b.project || b.seconds - a.seconds || a.spec.moduleId.localeCompare(b.spec.moduleId))
      .map((s) => s.spec);
  }
}
