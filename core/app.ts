/**
 * createApp(ports, config) → the Hono app: the one thing an embedding service needs.
 * Every route passes the gateway in the same order:
 *   request id + headers + log line → CORS (if configured; preflights stop here) → per-IP bucket →
 *   auth + scope → query → body → admission → handler. The first three are one step
 *   (gateway/headers.ts) wrapped around each route's own steps (gateway/pipeline.ts): one Hono
 *   handler per route; the dashboard and the docs take that step as middleware.
 */
import { Hono, type Context } from "hono";
import type { Config } from "./config.ts";
import { ApiError, echoed, errorBody, REFUSALS, StorageError, toApiError } from "./errors.ts";
import { PageFetchError } from "./net/fetch-errors.ts";
import type { AppDeps, AppEnv } from "./gateway/context.ts";
import { routePipeline, type PipelineDeps } from "./gateway/pipeline.ts";
import { corsGate } from "./gateway/cors.ts";
import { createGateway, reply } from "./gateway/headers.ts";
import { InFlightTable } from "./gateway/in-flight.ts";
import { ipCheck } from "./gateway/ip-limit.ts";
import { periodOf } from "./limits/period.ts";
import { Authenticator } from "./keys/authenticate.ts";
import { LastUsedTracker } from "./keys/last-used.ts";
import { openApiDocument } from "./openapi.ts";
import type { Ports } from "./ports.ts";
import { healthRoutes, type HealthProbes } from "./routes/health.ts";
import { keyRoutes } from "./routes/keys.ts";
import type { RouteDef } from "./gateway/route.ts";
import { researchRoutes } from "./operations/research/route.ts";
import { scrapeRoutes } from "./operations/scrape/route.ts";
import { mapRoutes } from "./operations/map/route.ts";
import { collectionRoutes } from "./operations/collections/route.ts";
import { jobRoutes } from "./operations/crawl/route.ts";
import { monitorRoutes } from "./operations/crawl/monitor-route.ts";
import { MonitorScheduler } from "./operations/crawl/monitors.ts";
import { searchRoutes } from "./operations/search/route.ts";
import { socialRoutes } from "./operations/social/route.ts";
import { videoRoutes } from "./operations/video/route.ts";
import { createServices, type ServiceOptions } from "./services.ts";
import { mountDashboard } from "./dashboard/mod.ts";
import { mountDocs } from "./docs/mod.ts";
import { apiGuide } from "./docs/guide.ts";
import { metasearchProbe } from "./routes/metasearch-probe.ts";
import { usageRoutes } from "./routes/usage.ts";
import { metricsRoutes } from "./routes/metrics.ts";
import { meteredCache } from "./gateway/metered-cache.ts";
import { compatRoutes } from "./compat/mod.ts";

export interface AppOptions {
  /** Operations an embedding service adds; one on a built-in's method and path replaces it. */
  operations?: (deps: AppDeps) => RouteDef[];
  health?: HealthProbes;
  /** Deadlines and timeouts of the built-in operations (tests shorten them). */
  services?: ServiceOptions;
}

export interface Quarry {
  app: Hono<AppEnv>;
  routes: RouteDef[];
  /** Waits for writes still in flight (last_used_at); call after the server stops accepting. */
  drain(): Promise<void>;
  /** Stops the job workers (what they had not finished resumes on the next start); after closing(), page requests under way get until 10 s after it to finish. */
  stop(): Promise<void>;
  /** The server is stopping: ends the job event streams, which would hold it open, and starts no new job page (call before waiting for requests). */
  closing(): void;
  /** Monitors' scheduler (null without job, read or monitor storage): tick() runs one round now. */
  monitors: MonitorScheduler | null;
  /** The requests being answered now (their response not yet begun), oldest first. */
  inFlight(): Array<{ req_id: string; method: string; path: string; running_ms: number }>;
}

export function createQuarry(given: Ports, config: Config, options: AppOptions = {}): Quarry {
  // With metrics on, cache lookups are counted as hits and misses at the port, for every operation.
  const ports: Ports = given.metrics ? { ...given, cache: meteredCache(given.cache, given.metrics) } : given;
  const services = createServices(ports, config, options.services);
  const deps: AppDeps = { ports, config, services };
  const { clock, logger } = ports;
  const auth = new Authenticator(ports.keys);
  const lastUsed = new LastUsedTracker(ports.keys, logger);
  // Not strict: `/v1/usage/` is `/v1/usage`, rather than a 405 that names the method it was sent with.
  const app = new Hono<AppEnv>({ strict: false });

  const inFlight = new InFlightTable();
  const usedSoFar = async (keyId: string, now: number) => (await ports.counters.usage(keyId, periodOf(now))).used;
  // The request id, headers and log line, CORS (preflights end there, uncounted) and the per-IP
  // bucket: one step wrapped around each route's one handler (gateway/headers.ts), so that Hono
  // runs a native route as a single handler. The error handler is read when a request fails.
  const gateway = createGateway({
    clock, logger, plans: config.plans, metrics: ports.metrics, inFlight, usedSoFar,
    onError: (err, c) => errorResponse(err, c),
    ...(config.corsOrigins.length ? { cors: corsGate(config.corsOrigins) } : {}),
    ...(config.ipRate ? { ipCheck: ipCheck(config.ipRate, clock, ports, config.trustProxy) } : {}),
  });

  const health = {
    backends: () => services.backendHealth(),
    ...(config.backends.searxng?.url ? { metasearch: metasearchProbe(services.fetch, config.backends.searxng.url) } : {}),
    ...options.health,
  };
  const builtIn: RouteDef[] = [
    ...healthRoutes(deps, health, clock.now()),
    ...keyRoutes(deps),
    ...usageRoutes(deps),
    ...searchRoutes(deps),
    ...scrapeRoutes(deps),
    ...mapRoutes(deps),
    ...jobRoutes(deps),
    ...monitorRoutes(deps),
    ...collectionRoutes(deps),
    ...videoRoutes(deps),
    ...socialRoutes(deps),
    ...researchRoutes(deps),
    ...(ports.metrics ? metricsRoutes(deps, ports.metrics) : []),
  ];
  // An embedding service's operation replaces a built-in one on the same method and path.
  const extra = options.operations?.(deps) ?? [];
  const replaced = new Set(extra.map((r) => `${r.method} ${r.path}`));
  const routes: RouteDef[] = [...builtIn.filter((r) => !replaced.has(`${r.method} ${r.path}`)), ...extra];
  // Each route's gateway steps and handler run as one Hono handler (gateway/pipeline.ts); the
  // error handler is read when a request fails, so it may be defined below.
  const pipelineDeps: PipelineDeps = { auth, planOf: services.accountPlans, counters: ports.counters, clock, lastUsed, logger, onError: (err, c) => errorResponse(err, c), nameRoutes: ports.metrics !== undefined };
  for (const r of routes) app.on([r.method], [r.path], gateway.wrap(routePipeline(r, pipelineDeps)));

  // Compatible APIs and MCP: they authenticate through the native routes they call, and answer in their own shapes.
  const compat = compatRoutes(() => app, deps, auth, routes, services.accountPlans);
  for (const r of compat) app.on([r.method], [r.path], gateway.wrap(r.handler, { startedAt: true }));

  // The document does not change while the server runs: serialized once.
  const document = JSON.stringify(openApiDocument(routes, config.version, apiGuide(routes, config.plans, config.ipRate)));
  app.get("/openapi.json", gateway.wrap((c) => (c.set("route", "/openapi.json"), reply(c, document))));
  // The dashboard's and the docs' handlers are mounted there: the gateway goes in front as middleware.
  for (const path of ["/dashboard", "/dashboard/*", "/docs", "/docs/*"]) app.use(path, gateway.middleware);
  mountDashboard(app);
  mountDocs(app, ports.docsAssets);
  const known = [...[...routes, ...compat.filter((r) => !r.fallback)].map((r) => ({ method: r.method, path: r.path })), { method: "GET", path: "/openapi.json" }];

  // Both handlers answer rather than throw, so the header middleware still wraps their responses.
  const errorResponse = (err: unknown, c: Context<AppEnv>) => {
    const apiErr = toApiError(err);
    const requestId = c.get("requestId") ?? "req_unknown";
    c.set("refused", REFUSALS.has(apiErr.code));
    if (apiErr.code === "rate_limited" || apiErr.code === "quota_exceeded") {
      // The per-IP bucket refuses before authentication; the key's own limits after it.
      ports.metrics?.refusal(apiErr.code === "rate_limited" && !c.get("auth") ? "ip_rate_limited" : apiErr.code);
    }
    if (apiErr.status >= 500) {
      // A storage outage fails every request the same way: its message says it, a stack per request does not.
      const stack = err instanceof StorageError ? undefined : (err as Error).stack;
      logger.error({ req_id: requestId, err: err instanceof Error ? { message: err.message, stack, cause: String(err.cause ?? "") } : String(err) }, apiErr.code);
    } else if (err instanceof PageFetchError) {
      // Why a fetch was refused (a resolved address, say) is for the operator only.
      logger.debug({ req_id: requestId, reason: err.internal }, apiErr.code);
    }
    // Hono's c.json, not reply(): a handler may have set headers on the context before it threw (MCP's WWW-Authenticate).
    for (const [k, val] of Object.entries(apiErr.extra.headers ?? {})) c.header(k, val);
    return c.json(errorBody(apiErr, requestId), apiErr.status as 400);
  };

  app.notFound(gateway.wrap((c) => {
    const allowed = known.filter((r) => pathMatches(r.path, c.req.path)).map((r) => r.method);
    if (allowed.length) {
      return errorResponse(new ApiError("method_not_allowed", `${c.req.method} is not allowed on ${echoed(c.req.path, 128)}; use ${allowed.join(", ")}.`, {
        headers: { Allow: allowed.join(", ") },
      }), c);
    }
    return errorResponse(new ApiError("not_found", `No such endpoint: ${c.req.method} ${echoed(c.req.path, 128)}.`), c);
  }));
  app.onError(errorResponse);

  // Job workers start with the app: unfinished jobs in the store resume here.
  // Not when start-up is abandoned (a port in use) and stop() ends them before they started.
  let stopped = false;
  services.jobs?.start().catch((err) => stopped || logger.error({ err: err instanceof Error ? err.message : String(err) }, "job workers could not start"));
  // Monitors run through the job engine: their schedules are in the store, ticked by every instance.
  const monitors = services.jobs && ports.monitors && ports.reads
    ? new MonitorScheduler(services, ports.monitors, services.accountPlans, logger, options.services?.monitorTickMs)
    : null;
  monitors?.start();
  return {
    app, routes, monitors, drain: () => lastUsed.drain(),
    stop: async () => {
      stopped = true;
      await monitors?.stop();
      await services.jobs?.stop();
    },
    closing: () => {
      void monitors?.stop();
      services.jobs?.changes.close();
      services.jobs?.pause();
    },
    inFlight: () => inFlight.list().map((r) => ({ req_id: r.req_id, method: r.method, path: r.path, running_ms: clock.now() - r.started })),
  };
}

export function createApp(ports: Ports, config: Config, options: AppOptions = {}): Hono<AppEnv> {
  return createQuarry(ports, config, options).app;
}

function pathMatches(pattern: string, path: string): boolean {
  const p = pattern.split("/");
  const s = path.replace(/\/+$/, "").split("/");
  return p.length === s.length && p.every((seg, i) => seg.startsWith(":") ? s[i] !== "" : seg === s[i]);
}
