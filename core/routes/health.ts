/**
 * GET /health (spec: Health record; api.md §7). Never calls scraped upstreams: backend
 * status comes from recent real traffic, supplied by the operations through `HealthProbe`s.
 */
import type { Context } from "hono";
import * as v from "valibot";
import type { AppDeps, AppEnv } from "../gateway/context.ts";
import { isoSeconds } from "../limits/period.ts";
import type { RouteDef } from "../gateway/route.ts";
import { reply } from "../gateway/headers.ts";
import { IsoTimestamp } from "./schemas.ts";
import { Count } from "../schema/fields.ts";

import type { BackendHealth } from "../backends/runner.ts";
import { reportValues, sameValues } from "./health-report.ts";

/** /health is read fresh by every poller: never cached on the way. */
const NO_STORE = { "Cache-Control": "no-store" };


/** Contributions from the operations: SearXNG reachability, backend breakers and rates. */
export interface HealthProbes {
  metasearch?: () => Promise<Record<string, unknown>>;
  backends?: () => Record<string, BackendHealth>;
}

const Service = v.object({ status: v.string() });
const BackendState = v.object({
  status: v.pipe(v.string(), v.description("ok, unknown (no traffic in the window), failing, suspended or disabled")),
  success_rate: v.number(),
  calls: v.optional(Count),
});
export const HealthRecord = v.object({
  status: v.picklist(["ok", "degraded", "unavailable"]),
  version: v.string(),
  uptime_secs: Count,
  timestamp: IsoTimestamp,
  services: v.object({
    database: v.object({ ...Service.entries, latency_ms: Count, error: v.optional(v.pipe(v.string(), v.description("why the database is down (unreachable): its kind, without addresses or paths"))) }),
    limits: v.pipe(
      v.object({ ...Service.entries, store: v.picklist(["database", "redis"]), latency_ms: Count }),
      v.description("where the per-minute windows and monthly quota counts live; when it is unreachable no request can be admitted, so the service is unavailable"),
    ),
    cache: v.object({ ...Service.entries, entries: Count, size_mb: v.number() }),
    metasearch: v.looseObject({ ...Service.entries }),
    intelligence: v.object({ ...Service.entries, sources_tracked: Count }),
    backends: v.object({ ...Service.entries, failing: v.array(v.string()), detail: v.record(v.string(), BackendState) }),
    browser: v.object({ ...Service.entries, pages_in_use: Count, max_pages: Count, error: v.optional(v.string()) }),
    proxies: v.pipe(
      v.object({
        ...Service.entries, total: Count, paused: Count,
        detail: v.array(v.object({
          id: v.string(), label: v.pipe(v.string(), v.description("country, pool, scheme, host and port: never the credentials")), pool: v.string(), country: v.nullable(v.string()), protocol: v.string(),
          status: v.picklist(["ok", "paused"]), paused_until: v.nullable(v.string()), failures: Count, requests: Count, failed: Count,
        })),
      }),
      v.description("the operator's proxies (QUARRY_PROXIES): disabled without any, degraded while every one is paused after failing"),
    ),
    file_descriptors: v.pipe(
      v.object({ ...Service.entries, open: v.optional(Count), limit: v.optional(v.nullable(Count)) }),
      v.description("the process's open files and sockets against its limit (ulimit -n): near_limit (degraded) from 90 % on, when new connections, page fetches and renders start failing; unknown where the platform does not tell"),
    ),
  }),
  backends: v.optional(v.record(v.string(), BackendState)),
});

/** The proxies' state: none configured is `disabled`; every one paused is `degraded`. */
function proxyHealth(ports: AppDeps["ports"]) {
  const detail = ports.proxies?.status() ?? [];
  const paused = detail.filter((p) => p.status === "paused").length;
  const status = detail.length === 0 ? "disabled" : paused === detail.length ? "degraded" : "ok";
  return { status, total: detail.length, paused, detail };
}

/** How long /health reuses the cache's size and the sources count it read. */
export const HEALTH_STATS_MS = 2_000;

/** The last answer of `read` while it is younger than HEALTH_STATS_MS (on the monotonic clock), one read at a time. */
function recent<T>(read: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | null = null;
  return () => {
    const at = performance.now();
    if (!last || at - last.at >= HEALTH_STATS_MS) last = { at, value: read() };
    return last.value;
  };
}

/**
 * One run of `make` shared by every caller that asked before it began: the first caller of a turn
 * schedules it for the end of the turn (`later`: after the I/O callbacks that delivered this turn's
 * requests), later callers of the turn join it, and one asking once it has begun waits for the next.
 */
function perTurn<T>(make: () => Promise<T>, later: (run: () => void) => void): () => Promise<T> {
  let next: Promise<T> | null = null;
  return () =>
    (next ??= new Promise<T>((resolve, reject) =>
      later(() => {
        next = null;
        make().then(resolve, reject);
      })
    ));
}

/** Share of the descriptor limit from which /health is degraded: past it, accepting a connection or opening a socket soon fails. */
const DESCRIPTORS_NEAR_LIMIT = 0.9;

/** Stands for the backends' report in the serialized body until it is put in: no value holds it (random per process). */
const BACKENDS = `backends-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;

/** Backend states that do not make the service degraded: `unknown` has simply seen no traffic yet. */
const HEALTHY_BACKEND = new Set(["ok", "unknown", "disabled"]);

export function healthRoutes({ ports, config }: AppDeps, probes: HealthProbes, startedAt: number): RouteDef[] {
  async function timed<T>(fn: () => Promise<T>): Promise<{ ok: true; value: T; ms: number } | { ok: false; ms: number; error: string }> {
    const t0 = performance.now();
    try {
      const value = await fn();
      return { ok: true, value, ms: Math.round(performance.now() - t0) };
    } catch (e) {
      return { ok: false, ms: Math.round(performance.now() - t0), error: e instanceof Error ? e.message : String(e) };
    }
  }

  // Each critical store's last state seen here, so a change is logged once, with its reason.
  const down = new Map<string, string | null>();
  function note(store: string, error: string | null): void {
    const was = down.get(store) ?? null;
    if (error && !was) ports.logger.error({ err: error }, `${store} unavailable: /health answers 503 until it is back`);
    else if (!error && was) ports.logger.info({}, `${store} available again`);
    down.set(store, error);
  }

  /** What /health, which anyone may read, says of a database error: its kind, never an address or a path (the log has those). */
  function publicReason(error: string): string {
    if (/removed or replaced/i.test(error)) return "the database file was removed or replaced while the server had it open; restart the server";
    if (/locked|busy/i.test(error)) return "the database is locked by another process";
    if (/full|ENOSPC|read-?only|EROFS|EACCES|EPERM|permission|CANTOPEN/i.test(error)) return "the database cannot be written (disk full, read-only or not permitted)";
    return "the database does not answer";
  }

  // Health is what load balancers poll. The database and the limits store are asked on every
  // request (the stores share one probe among the requests of a turn of the event loop); the
  // cache's size and the count of sources tracked are for reading, cost a scan (Redis, the source
  // table), and are kept for a few seconds.
  const cacheStats = recent(() => timed(() => ports.cache.stats()));
  const sourceCount = recent(() => timed(() => ports.sources.count()));

  let lastNear = false;
  function descriptorUse(): { status: string; open?: number; limit?: number | null } {
    let use;
    try {
      use = ports.descriptors?.();
    } catch {
      use = undefined;
    }
    if (!use) return { status: "unknown" };
    const near = use.limit !== null && use.open >= use.limit * DESCRIPTORS_NEAR_LIMIT;
    if (near !== lastNear) {
      if (near) ports.logger.error({ open: use.open, limit: use.limit }, "the process is near its open-file limit (ulimit -n): connections, page fetches and renders will fail with EMFILE");
      else ports.logger.info({ open: use.open, limit: use.limit }, "open files back below 90 % of the limit");
      lastNear = near;
    }
    return { status: near ? "near_limit" : "ok", open: use.open, limit: use.limit };
  }

  // The answer is made once per turn of the event loop for every /health request that arrived
  // in it (load balancers poll it, several at once): made after each of them asked, so as fresh as
  // an answer of its own. Its probes, the descriptor count, the backends' report and the body cost
  // tens of µs, which a request per poller each made again (issue #33).
  const answer = perTurn(compute, ports.nextTurn ?? ((run) => setTimeout(run, 0)));
  async function handler(c: Context<AppEnv>) {
    const { text, code } = await answer();
    return reply(c, text, code, "application/json", NO_STORE);
  }

  // The backends' report as JSON, made again only when one of its members changed: it is most of
  // the body, and between two turns nearly always the same (issue #33).
  let lastBackends: { values: Array<string | number>; json: string } | null = null;
  function backendsText(report: Record<string, BackendHealth>): string {
    if (lastBackends !== null && sameValues(lastBackends.values, report)) return lastBackends.json;
    const json = JSON.stringify(report);
    const values = reportValues(report);
    lastBackends = values ? { values, json } : null;
    return json;
  }

  async function compute(): Promise<{ text: string; code: 200 | 503 }> {
    const now = ports.clock.now();
    const counters = ports.counters;
    const [db, limits, cache, sources, metasearch] = await Promise.all([
      timed(() => ports.keys.ping()),
      counters.ping ? timed(() => counters.ping!()) : Promise.resolve(null),
      cacheStats(),
      sourceCount(),
      probes.metasearch ? timed(probes.metasearch) : Promise.resolve(null),
    ]);
    const backends = probes.backends?.() ?? {};
    note("database", db.ok ? null : db.error);
    if (limits) note("Redis (rate limits and quotas)", limits.ok ? null : limits.error);
    const limitsOk = limits ? limits.ok : db.ok;
    const failing = Object.entries(backends).filter(([, b]) => !HEALTHY_BACKEND.has(b.status)).map(([id]) => id);
    const fds = descriptorUse();
    const services = {
      database: db.ok ? { status: "ok", latency_ms: db.ms } : { status: "unreachable", latency_ms: db.ms, error: publicReason(db.error) },
      limits: { status: limitsOk ? "ok" : "unreachable", store: limits ? ("redis" as const) : ("database" as const), latency_ms: (limits ?? db).ms },
      cache: cache.ok
        ? { status: "ok", entries: cache.value.entries, size_mb: Math.round((cache.value.bytes / 1048576) * 1000) / 1000 }
        : { status: "unreachable", entries: 0, size_mb: 0 },
      metasearch: !metasearch
        ? { status: "disabled" }
        : metasearch.ok
          ? metasearch.value
          : { status: "unreachable", url: config.backends.searxng?.url ?? "", error: metasearch.error },
      intelligence: sources.ok
        ? { status: "ok", sources_tracked: sources.value }
        : { status: "unreachable", sources_tracked: 0 },
      // Always here, unlike the spec's top-level `backends` (absent when degraded): the state of
      // every backend is what an operator needs most exactly when something is failing.
      backends: { status: failing.length ? "degraded" : "ok", failing, detail: backends },
      browser: ports.render ? ports.render.health() : { status: "disabled", pages_in_use: 0, max_pages: 0 },
      proxies: proxyHealth(ports),
      file_descriptors: fds,
    };
    const optionalDown =
      !cache.ok || !sources.ok ||
      !["ok", "disabled"].includes(String(services.metasearch.status)) ||
      services.browser.status === "unavailable" ||
      services.proxies.status === "degraded" ||
      fds.status === "near_limit" ||
      failing.length > 0;
    const status = !db.ok || !limitsOk ? "unavailable" : optionalDown ? "degraded" : "ok";
    // The backends' report appears twice (in services, and at the top when healthy) and is most of
    // the body: serialized once and put in both places (issue #33).
    const body = JSON.stringify({
      status,
      version: config.version,
      uptime_secs: Math.floor((now - startedAt) / 1000),
      timestamp: isoSeconds(now),
      services: { ...services, backends: { ...services.backends, detail: BACKENDS } },
      // The spec: present in the healthy response, absent in the degraded one.
      ...(status === "ok" ? { backends: BACKENDS } : {}),
    });
    const backendsJson = backendsText(backends);
    const text = body.replaceAll(`"${BACKENDS}"`, () => backendsJson);
    return { text, code: status === "unavailable" ? 503 : 200 };
  }

  return [
    {
      method: "GET",
      path: "/health",
      operationId: "getHealth",
      summary: "Service health: ok (200), degraded (200) or unavailable (503: the database, or the Redis holding the limits, is down)",
      auth: false,
      scope: null,
      group: null,
      status: 200,
      response: HealthRecord,
      errors: [],
      handler,
    },
  ];
}
