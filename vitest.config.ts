import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./tests/helpers/sequencer.ts";
import { processTestFiles } from "./tests/helpers/test-kinds.ts";

// Two kinds of test file (tests/README.md says why and where the time goes):
// - `in-process`: everything runs inside the test worker (core functions, `app.fetch`, in-process
//   servers, SQLite, PostgreSQL and Redis over their sockets). Worker threads that keep their
//   modules from file to file, so the libraries and the app's modules load once per worker.
// - `processes`: files that start processes of their own (a `quarry` server or CLI, Deno, Bun,
//   Chromium, a private PostgreSQL or Redis). A fresh child process per file, as before: they send
//   signals, count their children and change the environment.
// Each has its own number of workers, and the in-process files run first, then the process files
// (tests/README.md, "Where the time went"): the first are busy on the CPU, four threads keep the two
// cores full; the second mostly wait on the processes they started, so as many run at once (six
// overloaded a slower machine until timing-bound cases failed: tests/README.md).
const processes = processTestFiles();
const workers = Number(process.env.QUARRY_TEST_WORKERS ?? 4);
const processWorkers = Number(process.env.QUARRY_TEST_PROCESS_WORKERS ?? 4);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    maxWorkers: workers,
    // Builds dist/ once when it is older than the sources, so spawned `quarry` processes never fall back to tsx.
    globalSetup: ["tests/helpers/global-setup.ts"],
    // The longest files start first, from a committed table of their times (a fresh clone has no
    // vitest cache to order by), so no long file starts near the end: tests/helpers/sequencer.ts.
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: "in-process",
          sequence: { groupOrder: 0 },
          include: ["tests/**/*.test.ts"],
          exclude: processes,
          pool: "threads",
          isolate: false,
          // Loads the lazily loaded libraries; removes each file's temp folders and stops its private servers, passed or failed.
          setupFiles: ["tests/helpers/setup.ts", "tests/setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "processes",
          include: processes,
          sequence: { groupOrder: 1 },
          maxWorkers: processWorkers,
          pool: "forks",
          // Their work happens in the processes they start: the test process loads the HTML libraries and
          // the tokenizer only where a file calls such code itself (it awaits loadLibraries()).
          setupFiles: ["tests/setup.ts"],
        },
      },
    ],
  },
});
