/**
 * The opening text of the API reference (OpenAPI `info.description`, shown at the top of /docs):
 * what a new API user needs before the first call. The scopes list and the plans table come from
 * the routes and the configuration this server runs with, so they cannot drift from what it does.
 */
import { documentedPath, type RouteDef } from "../gateway/route.ts";
import { SCOPES } from "../keys/scopes.ts";
import type { PlanTable } from "../limits/plans.ts";
import type { BucketConfig } from "../limits/token-bucket.ts";

const figure = (n: number | null) => (n === null ? "unlimited" : n.toLocaleString("en-US"));

export function apiGuide(routes: RouteDef[], plans: PlanTable, ipRate: BucketConfig | null): string {
  const byScope = SCOPES.map((scope) => {
    const ops = routes.filter((r) => r.scope === scope).map((r) => `${r.method} ${documentedPath(r.path)}`);
    return ops.length ? `- \`${scope}\`: ${ops.join(", ")}` : null;
  }).filter((line) => line !== null);
  const metered = routes.filter((r) => r.group).map((r) => `${r.method} ${documentedPath(r.path)} (\`${r.group}\`)`).join(", ");
  const storage = (b: number | null) => (b === null ? "unlimited" : b >= 2 ** 30 ? `${+(b / 2 ** 30).toFixed(1)} GB` : `${+(b / 2 ** 20).toFixed(1)} MB`);
  const planRows = Object.values(plans).map((p) => `| \`${p.id}\` | ${figure(p.quota)} | ${figure(p.perMinute)} | ${figure(p.jobsConcurrent)} | ${storage(p.jobsStorageBytes)} | ${figure(p.indexDocuments)} documents, ${storage(p.indexBytes)} of text |`);
  const perAddress = ipRate
    ? `Each client address may also send ${figure(ipRate.ratePerSecond)} requests a second (bursts of ${figure(ipRate.burst)}), with or without a key; over that, 429 \`rate_limited\` too.`
    : "This server sets no per-address limit.";
  return [
    "Search and research API for software clients and AI agents.",
    "",
    "## Keys",
    "Send `Authorization: Bearer qry_…` (the key: `qry_` and 64 hex characters) on every request except `GET /health`, " +
      "`/openapi.json`, `/docs` and `/dashboard`. The operator makes the first key (`quarry keys create`); a key with the `keys` scope " +
      "makes more (`POST /v1/keys`), and the secret is shown only in that answer. A revoked or unknown key gets 401 `invalid_key`.",
    "",
    "Each operation needs one scope; a key without it gets 403 `insufficient_scope`. `GET /v1/usage` and `/v1/usage/daily` take any key.",
    ...byScope,
    "",
    "## Plans and limits",
    "Limits are counted per key, under the plan of the key's account. This server's plans:",
    "",
    "| plan | requests a month | requests a minute | crawl and batch jobs at once | job storage | collections hold |",
    "|---|---|---|---|---|---|",
    ...planRows,
    "",
    "- **Collections** (`index_documents`, `index_bytes`): what all the account's collections may hold together, the bytes as their `bytes` count them. " +
      "An addition past either is a 403 `index_full` whose `limit` names it, and nothing of it is added.",
    "- **Per minute**: every request of the key that is admitted (in scope, valid, within its limits) counts, over any rolling " +
      "60 seconds, key management, usage and job reads included. Over it: 429 `rate_limited`, with `Retry-After` and " +
      "`error.retry_after` in whole seconds.",
    `- **Per month** (calendar month, UTC): each of these requests counts one unit in its usage group: ${metered}. ` +
      "A crawl or batch scrape counts one `crawl` unit per page read instead, and stops when the quota runs out. " +
      "Spent: 429 `quota_exceeded` until `X-RateLimit-Reset`.",
    "- **Not counted**: refused requests (400, 401, 403, 404, 405, 413, 415, 429, a URL refused with 422 `url_not_allowed`), a scrape that gives " +
      "nothing back (422 `unsupported_content`, `action_failed`, `model_unavailable`), answers that fail with a 5xx, and a request whose client " +
      "closed the connection before its answer was ready.",
    "- **Jobs**: an account may have as many crawl and batch jobs queued or running as its plan says; another is a 429 " +
      "`too_many_jobs`. What its jobs keep (pages, URLs found) counts toward its job storage until they expire: full, a running " +
      "job stops with `stopped_reason: storage_full` and a new one is a 429 `job_storage_full`. Accounts' jobs share the " +
      "server's workers fairly: one account's backlog does not hold another's pages behind it.",
    `- ${perAddress}`,
    "",
    "## Headers and errors",
    "Every answer carries `X-Request-Id` and `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`: the calling " +
      "key's monthly quota (`unlimited` on a plan without one), what it has left and when it resets. Without a known key they " +
      "describe the lowest plan's full allowance.",
    "",
    'Errors are `{"error": {"code", "message", "request_id"}}`; a refused field is named in `error.details`. An unknown body ' +
      "field or query parameter is a 400, not ignored. A JSON body may be up to 64 KiB (8 MB for " +
      "`POST /v1/collections/{name}/documents`); a larger one is a 413 `payload_too_large`.",
  ].join("\n");
}
