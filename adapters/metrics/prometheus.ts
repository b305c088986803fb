/**
 * The metrics port on prom-client, in the Prometheus text format. prom-client runs on Node, Deno
 * and Bun alike (tests/http/runtimes.test.ts scrapes it on each). Loaded only when
 * QUARRY_METRICS is on, so a server without metrics never pays for it.
 */
import client from "prom-client";
import type { Metrics } from "../../core/ports.ts";

/** Seconds: from a 5 ms cached answer to a 60 s crawl page. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export function createPrometheusMetrics(): Metrics {
  const registry = new client.Registry();
  registry.setDefaultLabels({ service: "quarry" });
  try {
    // Process memory, CPU, event-loop lag, where the runtime provides them.
    client.collectDefaultMetrics({ register: registry, prefix: "quarry_" });
  } catch {
    // A runtime without some process API still serves Quarry's own series.
  }
  const requests = new client.Counter({ name: "quarry_http_requests_total", help: "HTTP requests by route pattern, method and status", labelNames: ["route", "method", "status"], registers: [registry] });
  const latency = new client.Histogram({ name: "quarry_http_request_duration_seconds", help: "Time to answer, by route pattern and method", labelNames: ["route", "method"], buckets: LATENCY_BUCKETS, registers: [registry] });
  const calls = new client.Counter({ name: "quarry_backend_calls_total", help: "Upstream backend calls by backend and outcome (ok, error class, timeout)", labelNames: ["backend", "outcome"], registers: [registry] });
  const callLatency = new client.Histogram({ name: "quarry_backend_call_duration_seconds", help: "Upstream backend call time, by backend", labelNames: ["backend"], buckets: LATENCY_BUCKETS, registers: [registry] });
  const refusals = new client.Counter({ name: "quarry_limit_refusals_total", help: "Requests refused by a limit: rate_limited, quota_exceeded, ip_rate_limited", labelNames: ["reason"], registers: [registry] });
  const cache = new client.Counter({ name: "quarry_cache_lookups_total", help: "Response cache lookups by kind (search, scrape, …) and result (hit, miss)", labelNames: ["kind", "result"], registers: [registry] });
  const jobPages = new client.Counter({ name: "quarry_job_pages_total", help: "Crawl and batch pages this instance recorded, by job kind and outcome (ok, http_4xx, http_5xx, timeout, unreachable, robots, host_down, unsupported, other)", labelNames: ["kind", "outcome"], registers: [registry] });
  const jobsFinished = new client.Counter({ name: "quarry_jobs_finished_total", help: "Crawl and batch jobs this instance ended, by kind, final status and stopped_reason (none when it has none)", labelNames: ["kind", "status", "reason"], registers: [registry] });
  const webhooks = new client.Counter({ name: "quarry_webhook_deliveries_total", help: "Job webhook delivery attempts made by this instance: delivered, retried (failed, tried again later), given_up (the last attempt failed)", labelNames: ["outcome"], registers: [registry] });
  const gauges = new Set<string>();

  return {
    request(route, method, status, seconds) {
      requests.inc({ route, method, status: String(status) });
      latency.observe({ route, method }, seconds);
    },
    backendCall(backend, outcome, seconds) {
      calls.inc({ backend, outcome });
      callLatency.observe({ backend }, seconds);
    },
    refusal: (reason) => refusals.inc({ reason }),
    jobPage: (kind, outcome) => jobPages.inc({ kind, outcome }),
    jobFinished: (kind, status, reason) => jobsFinished.inc({ kind, status, reason }),
    webhookDelivery: (outcome) => webhooks.inc({ outcome }),
    cache: (kind, hit) => cache.inc({ kind, result: hit ? "hit" : "miss" }),
    gauge(name, help, label, read) {
      if (gauges.has(name)) return;
      gauges.add(name);
      new client.Gauge({
        name,
        help,
        labelNames: [label],
        registers: [registry],
        collect() {
          this.reset();
          for (const [value, n] of Object.entries(read())) this.set({ [label]: value }, n);
        },
      });
    },
    gaugeRows(name, help, labels, read) {
      if (gauges.has(name)) return;
      gauges.add(name);
      new client.Gauge({
        name,
        help,
        labelNames: labels,
        registers: [registry],
        async collect() {
          const rows = await read();
          this.reset();
          for (const row of rows) this.set(row.labels, row.value);
        },
      });
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
