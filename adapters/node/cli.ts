/**
 * The `quarry` CLI (api.md §1): serve, keys create|list|revoke, accounts set-plan, usage.
 * `--json` prints exactly one JSON object on stdout; human text otherwise. Errors go to
 * stderr with exit code 1 (2 for a usage mistake).
 */
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { ApiError } from "../../core/errors.ts";
import { isScope, SCOPES } from "../../core/keys/scopes.ts";
import { createKey, ensureAccount, listKeys, revokeKey } from "../../core/keys/service.ts";
import { USAGE_GROUPS } from "../../core/limits/groups.ts";
import { LOWEST_PLAN } from "../../core/limits/plans.ts";
import { periodOf, periodResetAt } from "../../core/limits/period.ts";
import { buildPorts, systemClock } from "../shared/bootstrap.ts";
import { createLogger } from "../shared/logger.ts";
import { loadConfig, StartupError } from "../shared/start.ts";
import { nodeRuntime, startNodeServer } from "./server.ts";

export const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/;

const HELP = `quarry — search and research API for AI agents

  quarry serve                                   start the HTTP service
  quarry demo                                    try it offline: recorded upstreams, a throwaway key
  quarry keys create --account NAME --scopes a,b --name LABEL [--plan PLAN] [--json]
  quarry keys list --account NAME [--json]
  quarry keys revoke KEY_ID [--json]
  quarry accounts set-plan NAME PLAN [--json]
  quarry usage --account NAME [--json]

Scopes: ${SCOPES.join(", ")}. Configuration comes from QUARRY_* environment variables
(and a .env file in the working directory); see README.md.`;

class UsageError extends Error {}

function fail(msg: string): never {
  throw new UsageError(msg);
}

async function withPorts<T>(fn: (ports: Awaited<ReturnType<typeof buildPorts>>["ports"], plans: ReturnType<typeof loadConfig>["plans"]) => Promise<T>): Promise<T> {
  const config = loadConfig(process.env);
  // The CLI logs nothing on stdout: its output is for the operator (or for --json parsing).
  const built = await buildPorts(config, nodeRuntime, createLogger("silent"));
  try {
    return await fn(built.ports, config.plans);
  } finally {
    await built.close();
  }
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
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const [cmd, sub, ...rest] = positionals;
  const json = values.json ?? false;
  if (values.help || !cmd) {
    process.stdout.write(`${HELP}\n`);
    return cmd || values.help ? 0 : 2;
  }
  const now = systemClock.now();

  if (cmd === "demo") {
    const { startDemo } = await import("./demo.ts");
    await startDemo(process.env);
    return -1; // keep running
  }
  if (cmd === "serve") {
    await startNodeServer(process.env);
    return -1; // keep running
  }
  if (cmd === "keys" && sub === "create") {
    const account = accountArg(values.account);
    const scopes = (values.scopes ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    if (!scopes.length) fail(`--scopes is required (comma-separated: ${SCOPES.join(", ")})`);
    const bad = scopes.filter((s) => !isScope(s));
    if (bad.length) fail(`unknown scope(s): ${bad.join(", ")}; use ${SCOPES.join(", ")}`);
    const name = (values.name ?? "").trim();
    if (!name || name.length > 100) fail("--name LABEL is required (1-100 characters)");
    return withPorts(async (ports, plans) => {
      if (values.plan !== undefined && !plans[values.plan]) fail(`unknown plan "${values.plan}"; plans: ${Object.keys(plans).join(", ")}`);
      const acct = await ensureAccount(ports.keys, account, values.plan, plans, now);
      const created = await createKey(ports.keys, { account: acct.name, name, scopes }, now);
      out(json, created, `Created ${created.id} (${created.name}) for account ${acct.name} on plan ${acct.plan}, scopes ${created.scopes.join(",")}.\n\n  ${created.key}\n\nThis secret is shown once; store it now.`);
      return 0;
    });
  }
  if (cmd === "keys" && sub === "list") {
    const account = accountArg(values.account);
    return withPorts(async (ports) => {
      const keys = await listKeys(ports.keys, account);
      const lines = keys.map((k) => `${k.id}  ${k.prefix}  ${k.scopes.join(",").padEnd(28)}  created ${k.created_at}  last used ${k.last_used_at ?? "never"}  ${k.name}`);
      out(json, { keys }, lines.length ? lines.join("\n") : `No active keys for account ${account}.`);
      return 0;
    });
  }
  if (cmd === "keys" && sub === "revoke") {
    const id = rest[0] ?? values.name;
    if (!id) fail("usage: quarry keys revoke KEY_ID");
    return withPorts(async (ports) => {
      const res = await revokeKey(ports.keys, null, id, now);
      out(json, res, `Revoked ${res.id} at ${res.revoked_at}.`);
      return 0;
    });
  }
  if (cmd === "accounts" && sub === "set-plan") {
    const [name, plan] = rest;
    if (!name || !plan) fail("usage: quarry accounts set-plan NAME PLAN");
    accountArg(name);
    return withPorts(async (ports, plans) => {
      if (!plans[plan]) fail(`unknown plan "${plan}"; plans: ${Object.keys(plans).join(", ")}`);
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
      const plan = plans[acct.plan] ?? plans[LOWEST_PLAN];
      const period = periodOf(now);
      const keys = await listKeys(ports.keys, account);
      const rows = await Promise.all(
        keys.map(async (k) => {
          const u = await ports.counters.usage(k.id, period);
          const endpoints = Object.fromEntries(USAGE_GROUPS.map((g) => [g, u.groups[g] ?? 0]));
          return { id: k.id, name: k.name, used: u.used, remaining: plan.quota === null ? null : Math.max(0, plan.quota - u.used), endpoints };
        }),
      );
      const body = { account, plan: plan.id, quota: plan.quota, per_minute_limit: plan.perMinute, period, reset_at: periodResetAt(now), keys: rows };
      const text = [
        `Account ${account}: plan ${plan.id}, quota ${plan.quota ?? "unlimited"} per key per month, ${plan.perMinute}/min; resets ${body.reset_at}.`,
        ...rows.map((r) => `  ${r.id}  used ${r.used}  remaining ${r.remaining ?? "unlimited"}  ${USAGE_GROUPS.map((g) => `${g}=${r.endpoints[g]}`).join(" ")}  ${r.name}`),
      ].join("\n");
      out(json, body, text);
      return 0;
    });
  }
  fail(`unknown command "${[cmd, sub].filter(Boolean).join(" ")}"; see quarry --help`);
}

export async function run(argv: string[]): Promise<void> {
  if (existsSync(".env") && typeof process.loadEnvFile === "function") process.loadEnvFile(".env");
  try {
    const code = await main(argv);
    if (code >= 0) process.exitCode = code;
  } catch (err) {
    if (err instanceof UsageError || (err instanceof Error && "code" in err && String((err as { code: unknown }).code).startsWith("ERR_PARSE_ARGS"))) {
      process.stderr.write(`quarry: ${err.message}\n`);
      process.exitCode = 2;
    } else if (err instanceof ApiError) {
      process.stderr.write(`quarry: ${err.message}\n`);
      process.exitCode = 1;
    } else if (err instanceof StartupError) {
      process.exitCode = 1;
    } else {
      process.stderr.write(`quarry: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    }
  }
}
