import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites that share PostgreSQL/Redis or spawn servers isolate themselves by name; files run in parallel.
    pool: "forks",
    setupFiles: ["tests/helpers/setup.ts"],
  },
});
