/**
 * The `quarry` CLI (api.md §1): serve, keys create|list|revoke, accounts list|set-plan, usage, backup,
 * jobs list|cancel.
 * `--json` prints exactly one JSON object on stdout; human text otherwise. Errors go to
 * stderr. Exit codes follow one rule (README, "The CLI"): 2 when the command cannot be done as
 * typed (a usage mistake, or a name that matches nothing: no such account, key, plan or job), 1
 * when something other than what was typed failed (configuration, storage).
 */
import { loadEnvFile } from "../shared/env-file.ts";
import { parseArgs } from "node:util";
import * as v from "valibot";
import { ApiError } from "../../core/errors.ts";
import { isScope, SCOPES } from "../../core/keys/scopes.ts";
import { createKey, ensureAccount, listKeys, revokeKey } from "../../core/keys/service.ts";
import { KeyName } from "../../core/routes/keys.ts";
import { USAGE_GROUPS } from "../../core/limits/groups.ts";
import { planLabel, resolvePlan, type PlanTable } from "../../core/limits/plans.ts";
import { periodOf, periodResetAt } from "../../core/limits/period.ts";
import { buildPorts, systemClock } from "../shared/bootstrap.ts";
import { createLogger } from "../shared/logger.ts";
import { loadConfig, packageVersion, StartupError } from "../shared/start.ts";
import { nodeRuntime, startNodeServer } from "./server.ts";
import { TERMINAL, type JobRecord, type JobStatus } from "../../core/ports/job-model.ts";
import type { ListedJob } from "../../core/ports/jobs.ts";

/** `--status` of `jobs list`: a status, `active` (queued and running) or `all`. */
const JOB_STATUSES: Record<string, JobStatus[]> = {
  active: ["queued", "running"], queued: ["queued"], running: ["running"], completed: ["completed"], failed: ["failed"], cancelled: ["cancelled"], all: [],
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A job as `jobs list` shows it: a crawl's start URL, or one of a batch's URLs and how many it has. */
function listedJob(j: ListedJob) {
  return {
    id: j.id, kind: j.kind, account: j.account, status: j.status, url: j.kind === "crawl" ? j.spec.url : j.firstUrl, urls: j.kind === "crawl" ? 1 : j.discovered + j.skipped,
    discovered: j.discovered, completed: j.completed, failed: j.failed, skipped: j.skipped, stopped_reason: j.stoppedReason, created_at: iso(j.createdAt)!, finished_at: iso(j.finishedAt),
  };
}

export const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/;

const HELP = `quarry — search and research API for AI agents

  quarry serve [--host HOST] [--port PORT]       start the HTTP service
  quarry demo                                    try it offline: recorded upstreams, a throwaway key
  quarry mcp                                     the MCP tools over stdio, calling the server at QUARRY_URL with QUARRY_KEY
  quarry help | --help                           this text
  quarry --version                               the version
  quarry keys create --account NAME --scopes a,b --name LABEL [--plan PLAN] [--json]
  quarry keys list --account NAME [--json]
  quarry keys revoke KEY_ID [--json]
  quarry accounts list [--json]
  quarry accounts set-plan NAME PLAN [--json]
  quarry usage --account NAME [--json]
  quarry backup FILE [--json]                    a consistent copy of the SQLite database, server running or not
  quarry jobs list [--account NAME] [--status STATUS] [--limit N] [--json]
                                                 crawl and batch jobs of every account, newest first (default: active ones, 100)
  quarry jobs cancel JOB_ID [--json]             cancels a queued or running job, as DELETE /v1/crawl/{id} does

Scopes: ${SCOPES.join(", ")}. Configuration comes from QUARRY_* environment variables
(and a .env file in the working directory); see README.md.`;

const SUBCOMMANDS: Record<string, string[]> = { keys: ["create", "list", "revoke"], accounts: ["list", "set-plan"], jobs: ["list", "cancel"] };

/**
 * The options and positional arguments each command takes. Anything else is a usage mistake
 * (exit 2), never silently dropped: `quarry keys revoke key_A key_B` would otherwise revoke
 * key_A alone and exit 0.
 */
const ACCEPTS: Record<string, { options: string[]; args: string[] }> = {
  serve: { options: ["host", "port"], args: [] },
  demo: { options: [], args: [] },
  mcp: { options: [], args: [] },
  "keys create": { options: ["account", "scopes", "name", "plan", "json"], args: [] },
  "keys list": { options: ["account", "json"], args: [] },
  "keys revoke": { options: ["json"], args: ["KEY_ID"] },
  "accounts list": { options: ["json"], args: [] },
  "accounts set-plan": { options: ["json"], args: ["NAME", "PLAN"] },
  usage: { options: ["account", "json"], args: [] },
  backup: { options: ["json"], args: ["FILE"] },
  "jobs list": { options: ["account", "status", "limit", "json"], args: [] },
  "jobs cancel": { options: ["json"], args: ["JOB_ID"] },
};

function checkArguments(command: string, given: Record<string, unknown>, args: string[]): void {
  const accepts = ACCEPTS[command];
  if (!accepts) return;
  for (const [option, value] of Object.entries(given)) {
    if (value !== undefined && value !== false && !accepts.options.includes(option)) fail(`${command} does not take --${option}; see quarry help`);
  }
  if (args.length > accepts.args.length) {
    const extra = args.slice(accepts.args.length).map((a) => `"${a}"`).join(", ");
    fail(`${command} takes ${accepts.args.length ? `only ${accepts.args.join(" ")}` : "no arguments"}, not ${extra}; see quarry help`);
  }
}

class UsageError extends Error {}

function fail(msg: string): never {
  throw new UsageError(msg);
}

async function withPorts<T>(fn: (ports: Awaited<ReturnType<typeof buildPorts>>["ports"], plans: ReturnType<typeof loadConfig>["plans"]) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env);
  // The CLI logs nothing on stdout: its output is for the operator (or for --json parsing).
  // Beside a running server: opening the storage must not touch the work it has in progress.
  const built = await buildPorts(config, nodeRuntime, createLogger("silent"), systemClock, { worker: false });
  try {
    return await fn(built.ports, config.plans);
  } finally {
    await built.close();
  }
}

/** An account's plan for the operator: its id, and what it is served as when QUARRY_PLANS lacks it. */
function shownPlan(plans: PlanTable, id: string): string {
  return planLabel(id, resolvePlan(plans, id));
}

/**
 * A key name as one line of a terminal: names made before the name rule (no control characters)
 * may hold line breaks or escape sequences, shown here as \uXXXX rather than acted on.
 */
function printable(name: string): string {
  return name.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function out(json: boolean, value: unknown, text: string) {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

function accountArg(v: string | undefined): string {
  if (!v) fail("--account NAME is required");
  if (!ACCOUNT_NAME.test(v)) fail(`--account "${v}": use 1-100 letters, digits, '.', '_', '@' or '-'`);
  return v;
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      account: { type: "string" },
      scopes: { type: "string" },
      name: { type: "string" },
      plan: { type: "string" },
      status: { type: "string" },
      limit: { type: "string" },
      host: { type: "string" },
      port: { type: "string" },
      version: { type: "boolean", short: "v", default: false },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const [cmd, sub, ...rest] = positionals;
  const json = values.json ?? false;
  if (values.version) {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (values.help || !cmd || cmd === "help") {
    process.stdout.write(`${HELP}\n`);
    return cmd || values.help ? 0 : 2;
  }
  const now = systemClock.now();
  const grouped = cmd in SUBCOMMANDS;
  checkArguments(grouped ? `${cmd} ${sub ?? ""}` : cmd, values, grouped ? rest : positionals.slice(1));

  if (cmd === "demo") {
    const { startDemo } = await import("./demo.ts");
    await startDemo(process.env);
    return -1; // keep running
  }
  if (cmd === "mcp") {
    const { startMcpStdio } = await import("./mcp-stdio.ts");
    await startMcpStdio(process.env);
    return -1; // serve stdio until the client closes it
  }
  if (cmd === "serve") {
    // Flags win over the environment (and .env), as an operator typing them expects.
    // They are checked here, so a mistake names the flag typed (exit 2), not QUARRY_PORT, and an
    // empty one is refused rather than read as unset (which would serve on the default).
    const env = { ...process.env };
    if (values.host !== undefined) {
      if (!values.host.trim()) fail("--host needs an address, e.g. 127.0.0.1 or 0.0.0.0");
      env.QUARRY_HOST = values.host;
    }
    if (values.port !== undefined) {
      if (!/^\d{1,5}$/.test(values.port.trim()) || Number(values.port) > 65535) fail(`--port "${values.port}" is not a port number (0-65535)`);
      env.QUARRY_PORT = values.port;
    }
    await startNodeServer(env);
    return -1; // keep running
  }
  for (const [group, subs] of Object.entries(SUBCOMMANDS)) {
    if (cmd === group && !subs.includes(sub ?? "")) {
      fail(`${sub ? `unknown subcommand "${group} ${sub}"` : `"${group}" needs a subcommand`}: ${subs.map((s) => `${group} ${s}`).join(", ")}`);
    }
  }
  if (cmd === "keys" && sub === "create") {
    const account = accountArg(values.account);
    const scopes = (values.scopes ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    if (!scopes.length) fail(`--scopes is required (comma-separated: ${SCOPES.join(", ")})`);
    const bad = scopes.filter((s) => !isScope(s));
    if (bad.length) fail(`unknown scope(s): ${bad.join(", ")}; use ${SCOPES.join(", ")}`);
    if (values.name === undefined) fail("--name LABEL is required (1-100 characters)");
    // The API's own rule: a name with a line break would print as a row of its own in `keys list`.
    const named = v.safeParse(KeyName, values.name);
    if (!named.success) fail(`--name: ${named.issues[0].message}`);
    const name = named.output;
    return withPorts(async (ports, plans) => {
      if (values.plan !== undefined && !plans[values.plan]) fail(`unknown plan "${values.plan}"; plans: ${Object.keys(plans).join(", ")}`);
      // --plan is the plan of an account this creates: an existing one's plan changes only through set-plan.
      const existing = await ports.keys.getAccount(account);
      if (existing && values.plan !== undefined && existing.plan !== values.plan) {
        fail(`account "${account}" is on plan ${shownPlan(plans, existing.plan)}; keys create does not change it: run \`quarry accounts set-plan ${account} ${values.plan}\`, or leave out --plan`);
      }
      const acct = await ensureAccount(ports.keys, account, values.plan, plans, now);
      const created = await createKey(ports.keys, { account: acct.name, name, scopes }, now);
      const resolved = resolvePlan(plans, acct.plan);
      const shown = planLabel(acct.plan, resolved);
      // --json prints the POST /v1/keys body alone; an undefined plan is said on stderr instead.
      if (json && resolved.fellBack) process.stderr.write(`quarry: account ${acct.name} is on plan ${shown}\n`);
      out(json, created, `Created ${created.id} (${created.name}) for account ${acct.name} on plan ${shown}, scopes ${created.scopes.join(",")}.\n\n  ${created.key}\n\nThis secret is shown once; store it now.`);
      return 0;
    });
  }
  if (cmd === "keys" && sub === "list") {
    const account = accountArg(values.account);
    return withPorts(async (ports) => {
      if (!(await ports.keys.getAccount(account))) fail(`no account "${account}"`);
      const keys = await listKeys(ports.keys, account);
      const lines = keys.map((k) => `${k.id}  ${k.prefix}  ${k.scopes.join(",").padEnd(28)}  created ${k.created_at}  last used ${k.last_used_at ?? "never"}  ${printable(k.name)}`);
      out(json, { keys }, lines.length ? lines.join("\n") : `No active keys for account ${account}.`);
      return 0;
    });
  }
  if (cmd === "keys" && sub === "revoke") {
    const id = rest[0];
    if (!id) fail("usage: quarry keys revoke KEY_ID");
    return withPorts(async (ports) => {
      // The CLI acts for no account, so the core's "in this account" wording would name one never given.
      // A key that does not exist (or no longer does) is a name that matches nothing, as an unknown account is.
      const res = await revokeKey(ports.keys, null, id, now).catch((err: unknown) => {
        if (err instanceof ApiError && err.code === "not_found") fail(`no active key "${id}"`);
        throw err;
      });
      out(json, res, `Revoked ${res.id} at ${res.revoked_at}.`);
      return 0;
    });
  }
  if (cmd === "accounts" && sub === "list") {
    return withPorts(async (ports, plans) => {
      const period = periodOf(now);
      // Each account with its plan, its active keys and this month's use by all its keys (revoked ones too).
      const accounts = await Promise.all(
        (await ports.keys.listAccounts()).map(async (a) => {
          const keys = await ports.keys.listKeys(a.name);
          const used = (await Promise.all(keys.map((k) => ports.counters.usage(k.id, period)))).reduce((n, u) => n + u.used, 0);
          return { name: a.name, plan: a.plan, served_plan: resolvePlan(plans, a.plan).plan.id, created_at: a.created_at, active_keys: keys.filter((k) => !k.revoked_at).length, used };
        }),
      );
      accounts.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const width = Math.max(0, ...accounts.map((a) => a.name.length));
      const lines = accounts.map((a) => `${a.name.padEnd(width)}  plan ${shownPlan(plans, a.plan)}  ${a.active_keys} active ${a.active_keys === 1 ? "key" : "keys"}  used ${a.used} in ${period}  created ${a.created_at}`);
      out(json, { period, accounts }, lines.length ? lines.join("\n") : "No accounts yet: `quarry keys create` makes the first.");
      return 0;
    });
  }
  if (cmd === "accounts" && sub === "set-plan") {
    const [name, plan] = rest;
    if (!name || !plan) fail("usage: quarry accounts set-plan NAME PLAN");
    accountArg(name);
    return withPorts(async (ports, plans) => {
      if (!plans[plan]) fail(`unknown plan "${plan}"; plans: ${Object.keys(plans).join(", ")}`);
      // A mistyped name must not create a new account: accounts come from `keys create`.
      if (!(await ports.keys.getAccount(name))) fail(`no account "${name}"`);
      const acct = await ensureAccount(ports.keys, name, plan, plans, now);
      out(json, { account: acct.name, plan: acct.plan }, `Account ${acct.name} is now on plan ${acct.plan}.`);
      return 0;
    });
  }
  if (cmd === "usage") {
    const account = accountArg(values.account);
    return withPorts(async (ports, plans) => {
      const acct = await ports.keys.getAccount(account);
      if (!acct) fail(`no account "${account}"`);
      const plan = resolvePlan(plans, acct.plan).plan;
      const period = periodOf(now);
      // The active keys, newest first, then the revoked ones that were used this month: their use
      // is part of the account's month, and revoking a key must not hide what it cost.
      const active = await listKeys(ports.keys, account);
      const revoked = (await ports.keys.listKeys(account)).filter((k) => k.revoked_at).sort((a, b) => (a.id < b.id ? 1 : -1));
      const keys = [...active.map((k) => ({ ...k, revoked_at: null as string | null })), ...revoked];
      const counted = await Promise.all(
        keys.map(async (k) => {
          const u = await ports.counters.usage(k.id, period);
          const endpoints = Object.fromEntries(USAGE_GROUPS.map((g) => [g, u.groups[g] ?? 0]));
          return { id: k.id, name: k.name, used: u.used, remaining: plan.quota === null ? null : Math.max(0, plan.quota - u.used), endpoints, revoked_at: k.revoked_at };
        }),
      );
      const rows = counted.filter((r) => r.revoked_at === null || r.used > 0);
      // plan is the account's own; served_plan the one whose limits apply (they differ when QUARRY_PLANS lacks plan).
      const body = { account, plan: acct.plan, served_plan: plan.id, quota: plan.quota, per_minute_limit: plan.perMinute, period, reset_at: periodResetAt(now), keys: rows };
      const text = [
        `Account ${account}: plan ${shownPlan(plans, acct.plan)}, quota ${plan.quota ?? "unlimited"} per key per month, ${plan.perMinute}/min; resets ${body.reset_at}.`,
        ...rows.map((r) => `  ${r.id}  used ${r.used}  remaining ${r.remaining ?? "unlimited"}  ${USAGE_GROUPS.map((g) => `${g}=${r.endpoints[g]}`).join(" ")}  ${printable(r.name)}${r.revoked_at ? `  (revoked ${r.revoked_at})` : ""}`),
      ].join("\n");
      out(json, body, text);
      return 0;
    });
  }
  if (cmd === "backup") {
    const file = sub;
    if (!file) fail("usage: quarry backup FILE (a new file: the copy of the database)");
    const config = loadConfig(process.env);
    if (config.databaseUrl) fail("QUARRY_DATABASE_URL is set, so the data is in PostgreSQL: back it up with pg_dump (quarry backup copies the embedded SQLite database)");
    const { backupSqlite, BackupRefused } = await import("./backup.ts");
    try {
      const done = backupSqlite(config.dataDir, file);
      const made = done.written_by ? `, data format ${done.format} written by Quarry ${done.written_by}` : "";
      out(json, done, `Backed up ${done.source} to ${done.file} (${done.bytes} bytes${made}); checked. To restore: stop the server, put it in place as quarry.db in QUARRY_DATA_DIR (remove quarry.db-wal and quarry.db-shm there), start it.`);
      return 0;
    } catch (err) {
      if (err instanceof BackupRefused) fail(err.message);
      throw err;
    }
  }
  if (cmd === "jobs" && sub === "list") {
    const account = values.account === undefined ? undefined : accountArg(values.account);
    const status = values.status ?? "active";
    const statuses = JOB_STATUSES[status];
    if (!statuses) fail(`--status "${status}": use ${Object.keys(JOB_STATUSES).join(", ")}`);
    const limit = values.limit === undefined ? 100 : /^\d{1,4}$/.test(values.limit) ? Number(values.limit) : 0;
    if (limit < 1 || limit > 1000) fail(`--limit "${values.limit}": a number of jobs from 1 to 1000`);
    return withPorts(async (ports) => {
      if (!ports.jobs) fail("this storage keeps no jobs");
      if (account !== undefined && !(await ports.keys.getAccount(account))) fail(`no account "${account}"`);
      // One more than shown says whether there are more. A job past its expiry is gone, as for the API (purged within a minute).
      const found = (await ports.jobs.store.list({ account, statuses: statuses.length ? statuses : undefined }, limit + 1)).filter((j) => j.expiresAt === null || j.expiresAt > now);
      const jobs = found.slice(0, limit).map(listedJob);
      const more = found.length > limit;
      const which = `${status === "all" ? "" : `${status} `}jobs${account ? ` of account ${account}` : ""}`;
      const width = Math.max(7, ...jobs.map((j) => j.account.length));
      const lines = [
        `${"ID".padEnd(32)}  KIND   ${"ACCOUNT".padEnd(width)}  STATUS     READ/FAILED/FOUND  CREATED                   STOPPED          URL`,
        ...jobs.map((j) => `${j.id.padEnd(32)}  ${j.kind.padEnd(5)}  ${j.account.padEnd(width)}  ${j.status.padEnd(9)}  ${`${j.completed}/${j.failed}/${j.discovered}`.padEnd(17)}  ${j.created_at}  ${(j.stopped_reason ?? "-").padEnd(15)}  ${printable(j.url ?? "-")}${j.kind === "batch" && j.urls > 1 ? ` (+${j.urls - 1} more)` : ""}`),
        ...(more ? [`(the newest ${limit}; there are more: --limit N shows up to 1000)`] : []),
      ];
      out(json, { status, account: account ?? null, limit, more, jobs }, jobs.length ? lines.join("\n") : `No ${which}.`);
      return 0;
    });
  }
  if (cmd === "jobs" && sub === "cancel") {
    const id = rest[0];
    if (!id) fail("usage: quarry jobs cancel JOB_ID");
    const config = loadConfig(process.env);
    return withPorts(async (ports) => {
      if (!ports.jobs) fail("this storage keeps no jobs");
      const job = await ports.jobs.store.get(id);
      if (!job || (job.expiresAt !== null && job.expiresAt <= now)) fail(`no job "${id}"`);
      const ended = (j: JobRecord) => `job ${j.id} already ended: ${j.status}${j.stoppedReason && j.stoppedReason !== j.status ? ` (${j.stoppedReason})` : ""}; nothing changed`;
      if (TERMINAL.has(job.status)) fail(ended(job));
      // The engine's own cancel, as DELETE /v1/crawl/{id} runs it: the job ends in the store, which
      // every server reads (a task checks its job before its page; the watchdog stops requests under
      // way within seconds), and its "cancelled" webhook is sent from here. The engine is not started:
      // it takes no task.
      const { JobEngine } = await import("../../core/jobs/engine.ts");
      const { readJobPage } = await import("../../core/pages/page-data.ts");
      const engine = new JobEngine(ports, config, (req) => readJobPage(ports, req));
      try {
        const after = await engine.cancel(id);
        if (!after || after.status !== "cancelled") fail(after ? ended(after) : `no job "${id}"`);
        const shown = listedJob({ ...after, firstUrl: null });
        out(json, { id: shown.id, kind: shown.kind, account: shown.account, status: shown.status, stopped_reason: shown.stopped_reason, finished_at: shown.finished_at, discovered: shown.discovered, completed: shown.completed, failed: shown.failed },
          `Cancelled ${after.kind} ${after.id} of account ${after.account}: ${after.completed} pages read, ${after.failed} failed, ${after.discovered} found. A running server fetches none of its pages from now on (requests under way stop within seconds); what was read stays.`);
        // The webhook's first attempt, made from here; a retry waits in the store for a server to make it.
        await engine.webhooks.settled();
      } finally {
        await engine.stop();
      }
      return 0;
    });
  }
  fail(`unknown command "${cmd}"; commands: serve, demo, mcp, keys, accounts, usage, backup, jobs, help (see quarry help)`);
}

export async function run(argv: string[]): Promise<void> {
  const unread = loadEnvFile();
  if (unread) process.stderr.write(`quarry: ${unread}\n`);
  try {
    const code = await main(argv);
    if (code >= 0) process.exitCode = code;
  } catch (err) {
    if (err instanceof UsageError || isParseArgsError(err)) {
      process.stderr.write(`quarry: ${usageMessage(err as Error)}\n`);
      process.exitCode = 2;
    } else if (err instanceof ApiError) {
      // The core's refusals of what was typed are the same mistake as the CLI's own (exit 2).
      process.stderr.write(`quarry: ${err.message}\n`);
      process.exitCode = err.code === "not_found" || err.code === "invalid_request" ? 2 : 1;
    } else if (err instanceof StartupError) {
      process.exitCode = 1;
    } else {
      process.stderr.write(`quarry: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    }
  }
}

function isParseArgsError(err: unknown): err is Error & { code: string } {
  return err instanceof Error && String((err as { code?: unknown }).code ?? "").startsWith("ERR_PARSE_ARGS");
}

/** node:util's parseArgs messages are long and (for unknown options) leave a quote open; say it plainly. */
function usageMessage(err: Error): string {
  if (!isParseArgsError(err)) return err.message;
  const option = /'(-[^']*)'/.exec(err.message)?.[1];
  if (err.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option) return `unknown option ${option}; see quarry help`;
  if (err.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option) return `option ${option.split(" ")[0]} needs a value; see quarry help`;
  return `${err.message.replace(/\s+$/, "")}; see quarry help`;
}
