/**
 * createApp(ports, config) → the Hono app: the one thing an embedding service needs.
 * Every route passes the gateway in the same order:
 *   request id + headers + log line → CORS (if configured; preflights stop here) → per-IP bucket →
 *   auth + scope → body → admission → handler.
 */
import { Hono, type Context, type MiddlewareHandler } from "hono";
import type { Config } from "./config.ts";
import { ApiError, errorBody, toApiError } from "./errors.ts";
import type { AppDeps, AppEnv } from "./gateway/context.ts";
import { admit, guard, jsonBody } from "./gateway/guard.ts";
import { corsGate } from "./gateway/cors.ts";
import { gatewayHeaders } from "./gateway/headers.ts";
import { ipLimit } from "./gateway/ip-limit.ts";
import { Authenticator } from "./keys/authenticate.ts";
import { LastUsedTracker } from "./keys/last-used.ts";
import { openApiDocument } from "./openapi.ts";
import type { Ports } from "./ports.ts";
import { healthRoutes, type HealthProbes } from "./routes/health.ts";
import { keyRoutes } from "./routes/keys.ts";
import type { RouteDef } from "./routes/route.ts";
import { scrapeRoutes } from "./routes/scrape.ts";
import { searchRoutes } from "./routes/search.ts";
import { videoRoutes } from "./operations/video/route.ts";
import { socialRoutes } from "./operations/social/route.ts";
import { researchRoutes } from "./operations/research/route.ts";
import { invidious, youtube } from "./backends/youtube/mod.ts";
import { createServices } from "./services.ts";
import { mountDashboard } from "./dashboard/mod.ts";
import { metasearchProbe } from "./routes/metasearch-probe.ts";
import { usageRoutes } from "./routes/usage.ts";

export interface AppOptions {
  /** Operations an embedding service adds; one on a built-in's method and path replaces it. */
  operations?: (deps: AppDeps) => RouteDef[];
  health?: HealthProbes;
}

export interface Quarry {
  app: Hono<AppEnv>;
  routes: RouteDef[];
  /** Waits for writes still in flight (last_used_at); call after the server stops accepting. */
  drain(): Promise<void>;
}

export function createQuarry(ports: Ports, config: Config, options: AppOptions = {}): Quarry {
  const deps: AppDeps = { ports, config };
  const { clock, logger } = ports;
  const auth = new Authenticator(ports.keys);
  const lastUsed = new LastUsedTracker(ports.keys, logger);
  const app = new Hono<AppEnv>();

  app.use("*", gatewayHeaders(clock, logger, config.plans));
  if (config.corsOrigins.length) app.use("*", corsGate(config.corsOrigins)); // preflights end here, uncounted
  if (config.ipRate) app.use("*", ipLimit(config.ipRate, clock, ports, config.trustProxy));

  const services = createServices(ports, config, [youtube, invidious]);
  const health = {
    backends: () => services.backendHealth(),
    ...(config.backends.searxng?.url ? { metasearch: metasearchProbe(ports, config.backends.searxng.url) } : {}),
    ...options.health,
  };
  const builtIn: RouteDef[] = [
    ...healthRoutes(deps, health, clock.now()),
    ...keyRoutes(deps),
    ...usageRoutes(deps),
    ...searchRoutes(deps, services),
    ...scrapeRoutes(deps),
    ...videoRoutes(deps, { registry: services.registry, runner: services.runner }),
    ...socialRoutes(deps, { backends: services.social }),
    ...researchRoutes(deps, services),
  ];
  // An embedding service's operation replaces a built-in one on the same method and path.
  const extra = options.operations?.(deps) ?? [];
  const replaced = new Set(extra.map((r) => `${r.method} ${r.path}`));
  const routes: RouteDef[] = [...builtIn.filter((r) => !replaced.has(`${r.method} ${r.path}`)), ...extra];
  for (const r of routes) {
    const steps: MiddlewareHandler<AppEnv>[] = [];
    if (r.auth) steps.push(guard(auth, config.plans, r.scope));
    if (r.body) steps.push(jsonBody(r.body));
    if (r.auth) steps.push(admit(ports.counters, clock, r.group, lastUsed, logger));
    app.on([r.method], [r.path], ...(steps as [MiddlewareHandler<AppEnv>]), r.handler);
  }

  const document = openApiDocument(routes, config.version);
  app.get("/openapi.json", (c) => c.json(document));
  mountDashboard(app);
  const known = [...routes.map((r) => ({ method: r.method, path: r.path })), { method: "GET", path: "/openapi.json" }];

  // Both handlers answer rather than throw, so the header middleware still wraps their responses.
  const errorResponse = (err: unknown, c: Context<AppEnv>) => {
    const apiErr = toApiError(err);
    const requestId = c.get("requestId") ?? "req_unknown";
    if (apiErr.status >= 500) {
      logger.error({ req_id: requestId, err: err instanceof Error ? { message: err.message, stack: err.stack, cause: String(err.cause ?? "") } : String(err) }, apiErr.code);
    }
    for (const [k, val] of Object.entries(apiErr.extra.headers ?? {})) c.header(k, val);
    return c.json(errorBody(apiErr, requestId), apiErr.status as 400);
  };

  app.notFound((c) => {
    const allowed = known.filter((r) => pathMatches(r.path, c.req.path)).map((r) => r.method);
    if (allowed.length) {
      return errorResponse(new ApiError("method_not_allowed", `${c.req.method} is not allowed on ${c.req.path}; use ${allowed.join(", ")}.`, {
        headers: { Allow: allowed.join(", ") },
      }), c);
    }
    return errorResponse(new ApiError("not_found", `No such endpoint: ${c.req.method} ${c.req.path}.`), c);
  });
  app.onError(errorResponse);

  return { app, routes, drain: () => lastUsed.drain() };
}

export function createApp(ports: Ports, config: Config, options: AppOptions = {}): Hono<AppEnv> {
  return createQuarry(ports, config, options).app;
}

function pathMatches(pattern: string, path: string): boolean {
  const p = pattern.split("/");
  const s = path.replace(/\/+$/, "").split("/");
  return p.length === s.length && p.every((seg, i) => seg.startsWith(":") ? s[i] !== "" : seg === s[i]);
}
