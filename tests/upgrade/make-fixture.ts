/**
 * Writes the data an older Quarry leaves behind, for the upgrade tests: the given commit is
 * exported from git, run with this checkout's node_modules, and used as an operator would use it
 * for a while. Its own CLI creates accounts and keys and revokes one; its own server answers
 * scrapes, a map and a batch scrape on a local test site, then is SIGKILLed in the middle of a
 * crawl. What it wrote is copied to tests/fixtures/upgrade/<commit>/ (quarry.db and its WAL, as
 * the kill left them) with manifest.json: the commit, when it was made, the site's address, the
 * keys and what the old server reported.
 *
 *   npx tsx tests/upgrade/make-fixture.ts <commit> [--out DIR] [--pg URL] [--redis URL] [--keep]
 *
 * --pg/--redis run the old version on PostgreSQL (and Redis) instead of SQLite: what it wrote to
 * PostgreSQL is saved as dump.sql (pg_dump --inserts, plain statements any client can replay);
 * Redis holds nothing PostgreSQL does not (every unit is written through), so it is not saved.
 * --keep leaves the exported old version and the test site's data directory in /tmp.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { startTestSite } from "../helpers/test-site.ts";

const ROOT = resolve(new URL("../..", import.meta.url).pathname);
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { out: { type: "string" }, pg: { type: "string" }, redis: { type: "string" }, keep: { type: "boolean", default: false } },
});
const ref = positionals[0];
if (!ref) {
  console.error("usage: npx tsx tests/upgrade/make-fixture.ts <commit> [--out DIR] [--pg URL] [--redis URL] [--keep]");
  process.exit(2);
}
const commit = spawnSync("git", ["-C", ROOT, "rev-parse", "--short=7", `${ref}^{commit}`], { encoding: "utf8" }).stdout.trim();
if (!commit) throw new Error(`no such commit: ${ref}`);
const committed = spawnSync("git", ["-C", ROOT, "show", "-s", "--format=%cI", commit], { encoding: "utf8" }).stdout.trim();

// The old version, as `git archive` gives it, with this checkout's dependencies.
const oldRoot = mkdtempSync(join(tmpdir(), `quarry-old-${commit}-`));
const tar = spawnSync("sh", ["-c", `git -C "${ROOT}" archive ${commit} | tar -x -C "${oldRoot}"`], { stdio: "inherit" });
if (tar.status !== 0) throw new Error("git archive failed");
symlinkSync(resolve(ROOT, "node_modules"), join(oldRoot, "node_modules"));
const dataDir = mkdtempSync(join(tmpdir(), `quarry-old-data-${commit}-`));

const site = await startTestSite({ crawlDelay: 0.15 });
const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  QUARRY_DATA_DIR: dataDir,
  QUARRY_EGRESS_ALLOW: "127.0.0.1/32",
  QUARRY_PLANS: '{"free":{"quota":1000,"per_minute":100000},"pro":{"quota":100000,"per_minute":100000}}',
  QUARRY_HOST: "127.0.0.1",
  QUARRY_PORT: "0",
  QUARRY_LOG_LEVEL: "info",
  QUARRY_EXTRACT_WORKERS: "0",
};
if (values.pg) env.QUARRY_DATABASE_URL = values.pg;
if (values.redis) env.QUARRY_REDIS_URL = values.redis;

function oldCli(args: string[]): any {
  const r = spawnSync(process.execPath, [join(oldRoot, "bin/quarry.js"), ...args, "--json"], { cwd: oldRoot, env, encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`old quarry ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function oldServer(): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [join(oldRoot, "bin/quarry.js"), "serve"], { cwd: oldRoot, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stderr!.on("data", (d) => (out += d));
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`old server did not start:\n${out}`)), 60_000);
    proc.stdout!.on("data", (d) => {
      out += d;
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]);
      }
    });
    proc.on("exit", (code) => rej(new Error(`old server exited with ${code}:\n${out}`)));
  });
  return { url, proc };
}

async function call(url: string, key: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } });
  return { status: res.status, body: await res.json() };
}
async function until(url: string, key: string, done: (j: any) => boolean, ms: number): Promise<any> {
  const end = Date.now() + ms;
  for (;;) {
    const { body } = await call(url, key);
    if (done(body) || Date.now() > end) return body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

// The operator's accounts and keys, made with the old CLI.
const main = oldCli(["keys", "create", "--account", "acme", "--scopes", "search,scrape,keys", "--name", "acme main"]);
const bot = oldCli(["keys", "create", "--account", "acme", "--scopes", "scrape", "--name", "acme bot"]);
const gone = oldCli(["keys", "create", "--account", "acme", "--scopes", "scrape", "--name", "acme old"]);
const pro = oldCli(["keys", "create", "--account", "globex", "--scopes", "scrape", "--name", "globex", "--plan", "pro"]);

const server = await oldServer();
const api = (path: string) => `${server.url}${path}`;
const page = (path: string) => `${site.ipUrl}${path}`;
const post = (path: string, key: string, body: unknown) => call(api(path), key, { method: "POST", body: JSON.stringify(body) });
for (const p of ["/about", "/contact", "/docs/intro"]) await post("/v1/scrape", main.key, { url: page(p) });
await post("/v1/scrape", bot.key, { url: page("/guides/start") });
await post("/v1/scrape", gone.key, { url: page("/blog/") });
for (const p of ["/docs/api", "/guides/deploy"]) await post("/v1/scrape", pro.key, { url: page(p) });
// Versions before map, crawl and batch scrape answer 404 here: their data simply has no jobs.
const jobs = (await post("/v1/map", main.key, { url: page("/") })).status !== 404;
const batch = jobs ? (await post("/v1/batch/scrape", bot.key, { urls: [page("/docs/faq"), page("/blog/2024-launch"), page("/missing")] })).body : null;
const batchDone = batch ? await until(api(`/v1/batch/scrape/${batch.id}`), bot.key, (j) => ["completed", "failed"].includes(j.status), 60_000) : null;
// Revoked through the old server (the CLI way is the same store call), after it was used.
const revoked = (await call(api(`/v1/keys/${gone.id}`), main.key, { method: "DELETE" })).body;
const usageBefore: Record<string, any> = {};
for (const [name, k] of Object.entries({ main, bot, pro })) usageBefore[name] = (await call(api("/v1/usage"), k.key)).body;
usageBefore.gone = null;

// A crawl, killed halfway.
const crawl = jobs ? (await post("/v1/crawl", main.key, { url: page("/"), max_depth: 10, limit: 300, timeout_ms: 2000 })).body : null;
const atKill = crawl ? await until(api(`/v1/crawl/${crawl.id}`), main.key, (j) => j.completed >= 10, 60_000) : null;
if (atKill && atKill.status !== "running") throw new Error(`the crawl was not running when it was to be killed: ${atKill.status}`);
server.proc.kill("SIGKILL");
await new Promise((r) => server.proc.once("exit", r));
await site.close();

const manifest = {
  commit,
  committed,
  made_at: Date.now(),
  storage: values.pg ? (values.redis ? "postgres+redis" : "postgres") : "sqlite",
  site: site.ipUrl,
  keys: { main, bot, gone, pro },
  revoked,
  usage_before_crawl: usageBefore,
  batch: batch && { id: batch.id, status: batchDone.status, completed: batchDone.completed, failed: batchDone.failed },
  crawl: crawl && { id: crawl.id, completed_at_kill: atKill.completed, paths_seen_before_kill: atKill.data.map((p: any) => new URL(p.url).pathname) },
};
const outDir = resolve(values.out ?? join(ROOT, "tests/fixtures/upgrade", commit));
mkdirSync(outDir, { recursive: true });
if (!values.pg) {
  for (const f of ["quarry.db", "quarry.db-wal"]) if (existsSync(join(dataDir, f))) copyFileSync(join(dataDir, f), join(outDir, f));
} else {
  const dump = spawnSync("pg_dump", ["--inserts", "--no-owner", "--no-privileges", "--dbname", values.pg], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (dump.status !== 0) throw new Error(`pg_dump failed: ${dump.stderr}`);
  // psql's meta-commands (pg_dump 15.14+ brackets the dump in \\restrict) mean nothing to other clients.
  writeFileSync(join(outDir, "dump.sql"), dump.stdout.split("\n").filter((l) => !l.startsWith("\\")).join("\n"));
}
writeFileSync(join(outDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
if (!values.keep) {
  rmSync(oldRoot, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
}
console.log(`wrote ${outDir} (old version ${commit} of ${committed}${values.keep ? `; kept ${oldRoot} and ${dataDir}` : ""})`);
