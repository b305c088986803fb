/**
 * Upgrading on SQLite: each data directory in tests/fixtures/upgrade/<commit>/ was written by that
 * older commit's own CLI and server, SIGKILLed mid-crawl (make-fixture.ts). This version's server
 * and CLI must read all of it and carry on (checks.ts).
 */
import { afterAll, beforeAll, describe } from "vitest";
import { startTestSite, type TestSite } from "../helpers/test-site.ts";
import { upgradeChecks } from "./checks.ts";
import { fixtureCommits, manifest, readRows, replayFixture } from "./fixture.ts";

let site: TestSite;
beforeAll(async () => {
  site = await startTestSite({ crawlDelay: 0.02 });
});
afterAll(async () => {
  await site?.close();
});

describe.each(fixtureCommits())("SQLite data written by %s", (commit) => {
  upgradeChecks(() => site, commit, manifest(commit), async (m, siteUrl) => {
    const dir = replayFixture(commit, m, siteUrl);
    return {
      env: { QUARRY_DATA_DIR: dir },
      keptDays: readRows(dir, "SELECT name FROM sqlite_master WHERE name = 'quarry_usage_daily'").length > 0,
      rows: async <T>(sql: string) => readRows<T>(dir, sql),
      close: async () => {},
    };
  });
});
