/**
 * GET /metrics: the Prometheus exposition of the metrics port, when the operator turned it on
 * (QUARRY_METRICS). Not behind API keys: scrapers use `QUARRY_METRICS_TOKEN` as a bearer token
 * when one is set. Backend health is read at scrape time, from real traffic only; so are the jobs
 * queued and running (from the job store) and the job pages this instance is working on.
 */
import * as v from "valibot";
import { ApiError } from "../errors.ts";
import type { AppDeps } from "../gateway/context.ts";
import type { RouteDef } from "../gateway/route.ts";
import { constantTimeEqual } from "../keys/secret.ts";
import type { JobEngine } from "../jobs/engine.ts";
import type { Logger, Metrics } from "../ports.ts";

export function metricsRoutes({ config, services, ports }: AppDeps, metrics: Metrics): RouteDef[] {
  const settings = config.metrics;
  if (!settings) return [];
  const health = () => services.backendHealth();
  const enabled = () => Object.entries(health()).filter(([, b]) => b.status !== "disabled");
  metrics.gauge("quarry_backend_up", "1 while a backend's recent calls mostly succeed (or it has had none), 0 while failing or suspended", "backend", () =>
    Object.fromEntries(enabled().map(([id, b]) => [id, b.status === "ok" || b.status === "unknown" ? 1 : 0])));
  metrics.gauge("quarry_backend_suspended", "1 while a backend's circuit breaker suspends it", "backend", () =>
    Object.fromEntries(enabled().map(([id, b]) => [id, b.status === "suspended" ? 1 : 0])));
  metrics.gauge("quarry_backend_success_rate", "Share of a backend's calls in the last 5 minutes that succeeded", "backend", () =>
    Object.fromEntries(enabled().filter(([, b]) => b.calls > 0).map(([id, b]) => [id, b.success_rate])));
  if (ports.render) {
    const render = ports.render;
    metrics.gauge("quarry_browser_pages", "Browser pages rendering now (in_use) and the most allowed at once (max)", "state", () => {
      const h = render.health();
      return { in_use: h.pages_in_use, max: h.max_pages };
    });
    if (render.egressSockets) {
      const sockets = render.egressSockets.bind(render);
      metrics.gauge("quarry_browser_egress_sockets", "Sockets the browser's egress proxy holds open: the browser's connections to it (client) and its connections to sites (upstream)", "side", () => sockets());
    }
  }
  const proxies = ports.proxies;
  if (proxies?.size) {
    // Labelled by the proxy's id (p1, p2, … in QUARRY_PROXIES order): a bounded set that names no host or credentials.
    metrics.gauge("quarry_proxy_up", "1 while a proxy of QUARRY_PROXIES may be used, 0 while it is paused after failing", "proxy", () =>
      Object.fromEntries(proxies.status().map((p) => [p.id, p.status === "ok" ? 1 : 0])));
    metrics.gauge("quarry_proxy_reads", "Reads sent through each proxy since start", "proxy", () => Object.fromEntries(proxies.status().map((p) => [p.id, p.requests])));
    metrics.gauge("quarry_proxy_failures", "Times each proxy itself failed (unreachable, refusing us) since start", "proxy", () => Object.fromEntries(proxies.status().map((p) => [p.id, p.failed])));
  }
  const extract = ports.extract;
  if (extract?.stats) {
    metrics.gauge("quarry_extract_workers", "Extraction worker threads: running, busy with a page, and pages waiting for one (queued)", "state", () => {
      const st = extract.stats!();
      return { running: st.workers, busy: st.busy, queued: st.queued };
    });
  }
  const jobs = services.jobs;
  if (jobs) jobGauges(jobs, metrics, ports.logger);
  return [
    {
      method: "GET",
      path: "/metrics",
      operationId: "getMetrics",
      summary: "Operational metrics in the Prometheus text format (QUARRY_METRICS; bearer QUARRY_METRICS_TOKEN when set)",
      auth: false,
      scope: null,
      group: null,
      status: 200,
      response: v.string(),
      alsoProduces: ["text/plain"],
      errors: ["missing_auth", "invalid_auth"],
      handler: async (c) => {
        if (settings.token) {
          const given = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "")?.[1]?.trim();
          if (!given) throw new ApiError("missing_auth", "GET /metrics needs 'Authorization: Bearer <QUARRY_METRICS_TOKEN>'.");
          if (!constantTimeEqual(given, settings.token)) throw new ApiError("invalid_auth", "That is not this server's metrics token.");
        }
        const { contentType, body } = await metrics.render();
        c.header("Cache-Control", "no-store");
        return c.body(body, 200, { "Content-Type": contentType });
      },
    },
  ];
}

/**
 * The job queue as the job store has it (shared by every instance, so each reports the same
 * count), and the tasks this instance works on. A store that cannot be read leaves the first out
 * of this scrape rather than failing it.
 */
function jobGauges(jobs: JobEngine, metrics: Metrics, logger: Logger): void {
  const store = jobs.store;
  if (metrics.gaugeRows && store.activeCounts) {
    const counts = store.activeCounts.bind(store);
    metrics.gaugeRows("quarry_jobs_active", "Crawl and batch jobs queued (no page recorded yet) and running, by kind; read from the job store, so with several instances each reports the same shared count", ["kind", "status"], async () => {
      const rows = await counts().catch((err) => {
        logger.warn({ err: String(err) }, "GET /metrics: the job store could not be read; quarry_jobs_active left out");
        return null;
      });
      if (!rows) return [];
      const out = (["crawl", "batch"] as const).flatMap((kind) => (["queued", "running"] as const).map((status) => ({ labels: { kind, status }, value: 0 })));
      for (const r of rows) {
        const row = out.find((o) => o.labels.kind === r.kind && o.labels.status === r.status);
        if (row) row.value = r.jobs;
      }
      return out;
    });
  }
  if (metrics.gaugeRows && store.diskUsage) {
    // Read at most every 10 s: a scrape every few seconds costs no more than that.
    const usage = store.diskUsage.bind(store);
    let last: { at: number; value: Promise<{ database: number | null; jobs: number } | null> } | null = null;
    const read = () => {
      const now = jobs.ports.clock.now();
      if (!last || now - last.at >= 10_000) {
        last = {
          at: now,
          value: usage().catch((err) => {
            logger.warn({ err: String(err) }, "GET /metrics: the store's size could not be read; quarry_store_bytes and quarry_job_data_bytes left out");
            last = null;
            return null;
          }),
        };
      }
      return last.value;
    };
    metrics.gaugeRows("quarry_store_bytes", "Size of the database on disk (SQLite: its file's pages; PostgreSQL: pg_database_size), read at most every 10 s", [], async () => {
      const u = await read();
      return u && u.database !== null ? [{ labels: {}, value: u.database }] : [];
    });
    metrics.gaugeRows("quarry_job_data_bytes", "Bytes the crawl and batch jobs kept hold (their pages as stored and the URLs they found), every account together; each account's share is capped by its plan's jobs_storage_bytes", [], async () => {
      const u = await read();
      return u ? [{ labels: {}, value: u.jobs }] : [];
    });
  }
  metrics.gaugeRows?.("quarry_job_tasks_in_progress", "Crawl and batch pages this instance is working on now (waiting for their claim, robots.txt, quota or their host's turn, or being read)", [], async () =>
    [{ labels: {}, value: jobs.running.size }]);
}
