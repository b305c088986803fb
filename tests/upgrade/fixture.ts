/**
 * A data directory an older Quarry wrote (tests/fixtures/upgrade/<commit>/, made by
 * make-fixture.ts), copied to a temp folder and replayed as if the upgrade happened the moment
 * the old server died: its instants move forward by the time since, its month and day become
 * today's, and the local test site's old address becomes the one it has now. Nothing else is
 * touched, so whatever the current version reads is what the old one wrote.
 */
import { copyFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { dayOf, periodOf } from "../../core/limits/period.ts";
import { tempDir } from "../helpers/temp.ts";

export const FIXTURES = resolve(new URL("../fixtures/upgrade", import.meta.url).pathname);
/** PostgreSQL fixtures: dump.sql (pg_dump --inserts) and manifest.json per commit. */
export const PG_FIXTURES = resolve(new URL("../fixtures/upgrade-pg", import.meta.url).pathname);

export interface Manifest {
  commit: string;
  committed: string;
  made_at: number;
  storage: string;
  site: string;
  keys: Record<"main" | "bot" | "gone" | "pro", { id: string; key: string; name: string; scopes: string[] }>;
  revoked: { id: string; revoked_at: string };
  usage_before_crawl: Record<string, { plan: string; used: number; endpoints: Record<string, number> } | null>;
  batch: { id: string; status: string; completed: number; failed: number } | null;
  crawl: { id: string; completed_at_kill: number } | null;
}

export function fixtureCommits(): string[] {
  const commits = readdirSync(FIXTURES).filter((d) => existsSync(join(FIXTURES, d, "manifest.json")));
  // A fixture without its database must fail, not drop out of the suite unseen (.gitignore once kept them out of git).
  for (const c of commits) if (!existsSync(join(FIXTURES, c, "quarry.db"))) throw new Error(`tests/fixtures/upgrade/${c} has no quarry.db`);
  return commits;
}

export function pgFixtureCommits(): string[] {
  return readdirSync(PG_FIXTURES).filter((d) => existsSync(join(PG_FIXTURES, d, "dump.sql")));
}

export function manifest(commit: string, root = FIXTURES): Manifest {
  return JSON.parse(readFileSync(join(root, commit, "manifest.json"), "utf8"));
}

/**
 * Loads a PostgreSQL fixture into the empty database at `url`, moved to now and to `siteUrl` as
 * replayFixture does. The dead server's leases, claims and pg-boss's running tasks are left as
 * they were: they have run out, as they would have by the time an operator upgrades.
 */
/**
 * The fixtures' crawl gave each page 2 s (so that /slow, which never answers, fails soon). On a loaded
 * machine (the suite's parallel workers) an ordinary page's fetch and extraction can pass that and fail
 * as a timeout, which is not what these tests are about (resuming the old crawl): its pages get 10 s
 * (at 5 s a clone-alone run on a slow machine still lost one ordinary page to a timeout).
 */
const OLD_PAGE_TIMEOUT = '"timeoutMs":2000';
const PAGE_TIMEOUT = '"timeoutMs":10000';

export async function replayPgFixture(commit: string, m: Manifest, siteUrl: string, url: string, now = Date.now()): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(readFileSync(join(PG_FIXTURES, commit, "dump.sql"), "utf8"));
    const delta = now - m.made_at;
    const [oldPeriod, oldDay, period, day] = [periodOf(m.made_at), dayOf(m.made_at), periodOf(now), dayOf(now)];
    // Versions before jobs or per-day usage have not those tables.
    const has = async (table: string) => (await client.query("SELECT to_regclass($1) AS t", [table])).rows[0].t !== null;
    await client.query("BEGIN");
    await client.query("UPDATE public.quarry_usage SET period = $1 WHERE period = $2", [period, oldPeriod]);
    if (await has("public.quarry_usage_daily")) await client.query("UPDATE public.quarry_usage_daily SET period = $1, day = $2 WHERE day = $3", [period, day, oldDay]);
    if (await has("public.quarry_jobs")) {
      await client.query("UPDATE public.quarry_jobs SET created_at = created_at + $1, deadline_at = deadline_at + $1, finished_at = finished_at + $1, expires_at = expires_at + $1, spec = replace(replace(spec, $2, $3), $4, $5)", [delta, m.site, siteUrl, OLD_PAGE_TIMEOUT, PAGE_TIMEOUT]);
      await client.query("UPDATE public.quarry_frontier SET url = replace(url, $1, $2), data = replace(data, $1, $2)", [m.site, siteUrl]);
      await client.query("UPDATE pgboss.job SET data = replace(data::text, $1, $2)::jsonb, singleton_key = replace(singleton_key, $1, $2), keep_until = now() + interval '14 days'", [m.site, siteUrl]);
    }
    await client.query("COMMIT");
  } finally {
    await client.end();
  }
}

const tables = (db: Database.Database) => new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name));

/** The fixture in a fresh data directory, moved to now and to `siteUrl`. */
export function replayFixture(commit: string, m: Manifest, siteUrl: string, now = Date.now()): string {
  const dir = tempDir(`quarry-upgrade-${commit}-`);
  for (const f of ["quarry.db", "quarry.db-wal"]) if (existsSync(join(FIXTURES, commit, f))) copyFileSync(join(FIXTURES, commit, f), join(dir, f));
  const db = new Database(join(dir, "quarry.db"));
  const delta = now - m.made_at;
  const [oldPeriod, oldDay, period, day] = [periodOf(m.made_at), dayOf(m.made_at), periodOf(now), dayOf(now)];
  const have = tables(db);
  db.transaction(() => {
    db.prepare("UPDATE quarry_usage SET period = ? WHERE period = ?").run(period, oldPeriod);
    if (have.has("quarry_usage_daily")) db.prepare("UPDATE quarry_usage_daily SET period = ?, day = ? WHERE day = ?").run(period, day, oldDay);
    db.prepare("UPDATE quarry_window SET ms = ms + ?").run(delta);
    if (have.has("quarry_jobs")) {
      db.prepare("UPDATE quarry_jobs SET created_at = created_at + ?, deadline_at = deadline_at + ?, finished_at = finished_at + ?, expires_at = expires_at + ?, spec = replace(replace(spec, ?, ?), ?, ?)").run(delta, delta, delta, delta, m.site, siteUrl, OLD_PAGE_TIMEOUT, PAGE_TIMEOUT);
      db.prepare("UPDATE quarry_frontier SET url = replace(url, ?, ?), data = replace(data, ?, ?), lease_until = lease_until + ?").run(m.site, siteUrl, m.site, siteUrl, delta);
    }
  })();
  db.close();
  return dir;
}

/** Rows of the fixture as the old version left them (read-only, from the copy in `dir`). */
export function readRows<T>(dir: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(join(dir, "quarry.db"), { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}
