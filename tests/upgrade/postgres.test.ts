/**
 * Upgrading on PostgreSQL with Redis: tests/fixtures/upgrade-pg/<commit>/dump.sql is what that
 * older commit's own CLI and server wrote to PostgreSQL, with Redis for limits and counters,
 * until it was SIGKILLed mid-crawl (make-fixture.ts --pg --redis). It is loaded into a private
 * database, and this version's server, on it and a fresh Redis (Redis holds nothing PostgreSQL
 * does not: it is re-seeded from it), must read all of it and carry on (checks.ts).
 */
import pg from "pg";
import { afterAll, beforeAll, describe } from "vitest";
import { tempDatabase } from "../helpers/pg.ts";
import { PrivateRedis } from "../helpers/private-services.ts";
import { startTestSite, type TestSite } from "../helpers/test-site.ts";
import { upgradeChecks } from "./checks.ts";
import { manifest, PG_FIXTURES, pgFixtureCommits, replayPgFixture } from "./fixture.ts";

let site: TestSite;
beforeAll(async () => {
  site = await startTestSite({ crawlDelay: 0.02 });
});
afterAll(async () => {
  await site?.close();
});

describe.each(pgFixtureCommits())("PostgreSQL and Redis data written by %s", (commit) => {
  upgradeChecks(() => site, commit, manifest(commit, PG_FIXTURES), async (m, siteUrl) => {
    const db = await tempDatabase(`upgrade_${commit}`);
    await replayPgFixture(commit, m, siteUrl, db.url);
    const redis = await PrivateRedis.start();
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    const tables = await pool.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'quarry_usage_daily'");
    return {
      env: { QUARRY_DATABASE_URL: db.url, QUARRY_REDIS_URL: redis.url, QUARRY_JOB_RECOVERY: "2s" },
      keptDays: tables.rows.length > 0,
      rows: async <T>(sql: string) => (await pool.query(sql)).rows as T[],
      close: async () => {
        await pool.end();
        await redis.down();
        await db.drop();
      },
    };
  });
});
