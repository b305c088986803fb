import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites that share PostgreSQL/Redis or spawn servers isolate themselves by name; files run in parallel.
    pool: "forks",
    // Loads the lazily loaded libraries; removes each file's temp folders and stops its private servers, passed or failed.
    setupFiles: ["tests/helpers/setup.ts", "tests/setup.ts"],
  },
});
