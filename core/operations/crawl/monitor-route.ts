/** /v1/monitors: saved scrapes and crawls run on a schedule, calling their webhook when a page changed (issue #31). */
import type { Context } from "hono";
import type { AppDeps, AppEnv } from "../../gateway/context.ts";
import type { RouteDef } from "../../gateway/route.ts";
import type { JobCaller } from "./crawl.ts";
import { createMonitor, deleteMonitor, getMonitor, listMonitors, monitorRuns, patchMonitor } from "./monitors.ts";
import { MAX_INTERVAL_S, MIN_INTERVAL_S, MonitorAnswer, MonitorBody, MonitorDeleted, MonitorList, MonitorPatchBody, RunList, type MonitorPatchRequest, type MonitorRequest } from "./monitor-schema.ts";

function caller(c: Context<AppEnv>): JobCaller {
  const auth = c.get("auth")!;
  return { account: auth.account.name, keyId: auth.key.id, plan: auth.plan };
}

const ID = { id: "The monitor id, mon_<ulid>" };
const FREE = "Not metered (its runs are, as the scrape or crawl they make).";

export function monitorRoutes({ services, ports }: AppDeps): RouteDef[] {
  const store = ports.monitors;
  const id = (c: Context<AppEnv>) => c.req.param("id") ?? "";
  const common = { auth: true, scope: "scrape", group: null } as const;
  return [
    {
      method: "POST", path: "/v1/monitors", operationId: "monitorCreate",
      summary: "Watch a page or a site: a scrape or crawl run on a schedule that calls a webhook when something changed",
      description:
        `Saves a monitor: \`scrape\` (one page, with the fields of POST /v1/scrape's job form) or \`crawl\` (a site, with the fields of POST /v1/crawl), run every \`interval_seconds\` (${MIN_INTERVAL_S}–${MAX_INTERVAL_S}, default 3600) with the \`changes\` format on under the monitor's own tag (its reads never mix with the account's other reads). The first run is due at once and records the baseline: it sends nothing. Each later run whose pages include one new (a crawl found it), changed or removed (404/410) POSTs \`{type: "monitor.changed", id: <monitor id>, timestamp, data: {monitor_id, run_id, job_id, url, pages, changed_count, changed: [{url, change_status, previous_read_at, visibility, diff?, title, status_code}]}}\` to \`webhook.url\`, signed with \`X-Quarry-Signature: sha256=<HMAC-SHA256 of the body>\` when it has a \`secret\`, with \`X-Quarry-Delivery\` the run id, retried like job webhooks; a run where nothing changed sends nothing. Each run is a crawl or batch job, metered as one (one unit of the \`crawl\` group per page read, on the key that created the monitor); a run the quota or the job limits refuse is recorded with that outcome in GET /v1/monitors/{id}/runs. A plan keeps at most \`monitors\` of them (403 \`too_many_monitors\`). ${FREE}`,
      example: { scrape: { url: "https://example.org/pricing" }, interval_seconds: 3600, webhook: { url: "https://hooks.example.org/quarry", secret: "s3cret" } },
      ...common, body: MonitorBody, status: 201, response: MonitorAnswer, errors: ["url_not_allowed", "too_many_monitors"],
      handler: async (c) => c.json(await createMonitor(services, store, caller(c), c.get("body") as MonitorRequest), 201),
    },
    {
      method: "GET", path: "/v1/monitors", operationId: "monitorList",
      summary: "List this account's monitors", description: `Every monitor of the account, newest first, with when it runs next. ${FREE}`,
      ...common, status: 200, response: MonitorList, errors: [],
      handler: async (c) => c.json(await listMonitors(services, store, caller(c))),
    },
    {
      method: "GET", path: "/v1/monitors/:id", operationId: "monitorGet",
      summary: "Read a monitor", description: `The monitor (its webhook's URL, never its secret). Another account's monitor is a 404. ${FREE}`,
      ...common, params: ID, status: 200, response: MonitorAnswer, errors: ["not_found"],
      handler: async (c) => c.json(await getMonitor(services, store, caller(c), id(c))),
    },
    {
      method: "PATCH", path: "/v1/monitors/:id", operationId: "monitorUpdate",
      summary: "Pause, resume or change a monitor",
      description: `\`paused: true\` stops its runs (none starts while paused); \`paused: false\` resumes it, and a run that fell due meanwhile starts at once. \`interval_seconds\`, \`webhook\` and \`name\` change those. What it watches cannot change: create another monitor. ${FREE}`,
      example: { paused: true },
      ...common, params: ID, body: MonitorPatchBody, status: 200, response: MonitorAnswer, errors: ["not_found", "url_not_allowed"],
      handler: async (c) => c.json(await patchMonitor(services, store, caller(c), id(c), c.get("body") as MonitorPatchRequest)),
    },
    {
      method: "DELETE", path: "/v1/monitors/:id", operationId: "monitorDelete",
      summary: "Delete a monitor", description: `Deletes the monitor, its run history and the reads its runs compared against; no run starts after this. A run's job already started finishes, without notifying. ${FREE}`,
      ...common, params: ID, status: 200, response: MonitorDeleted, errors: ["not_found"],
      handler: async (c) => c.json(await deleteMonitor(services, store, caller(c), id(c))),
    },
    {
      method: "GET", path: "/v1/monitors/:id/runs", operationId: "monitorRuns",
      summary: "A monitor's recent runs and their outcome",
      description: `Its last 100 runs, newest first: when each was due and started, its job, how many pages it read and found changed, and its outcome (baseline, unchanged, changed, failed, skipped, or the refusal that kept its job from starting: quota_exceeded, too_many_jobs…). ${FREE}`,
      ...common, params: ID, status: 200, response: RunList, errors: ["not_found"],
      handler: async (c) => c.json(await monitorRuns(services, store, caller(c), id(c))),
    },
  ];
}

export type { MonitorRequest };
