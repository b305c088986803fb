/**
 * Per-app services, built once from the backend catalogue and the configuration: one registry
 * and one runner for web and video, one for the social platforms (its fetch signs in), the
 * egress-policed fetch, the job engine (handed its page reader) and the settings the operations
 * share. Each operation's route builds what it needs from these once, so circuit breakers and
 * success rates see all traffic, and /health reports every backend. Services know no operation.
 */
import { collectionReranker, type Reranker } from "./collections/hybrid.ts";
import type { Config } from "./config.ts";
import { CATALOGUE, VIDEO_BACKENDS, WEB_BACKENDS } from "./backends/catalogue.ts";
import { createRegistry, resolveBackend, type BackendRegistry } from "./backends/registry.ts";
import { DATA_API_BASE } from "./backends/youtube/data-api.ts";
import { createEgress, guardedFetch } from "./net/egress.ts";
import { createRunner, type BackendHealth, type BackendRunner } from "./backends/runner.ts";
import type { FetchPort, Ports } from "./ports.ts";
import { createSocialBackends, type SocialBackends } from "./backends/social/registry.ts";
import { JobEngine, type EngineOptions } from "./jobs/engine.ts";
import { readJobPage } from "./pages/page-data.ts";
import { accountPlans, type AccountPlans } from "./limits/plans.ts";

export interface ServiceOptions {
  /** Whole-request deadlines by operation, ms (each operation has its own default). */
  deadlines?: { video?: number; social?: number; research?: number; search?: number };
  /** Longest the research model may take to write its report (default 20 s). */
  llmTimeoutMs?: number;
  /** Webhook backoff, leases and the watchdog's period of the job engine (tests shorten them). */
  jobs?: EngineOptions;
  /** How often monitors are ticked, ms (default 5 s; 0: only when tick() is called, for tests). */
  monitorTickMs?: number;
}

/**
 * Base URLs of every upstream the operator configured (or left at its public default): requests
 * to these origins go out as configured; any other URL passes the egress guard (core/net/egress.ts).
 */
export function configuredUpstreams(config: Config): string[] {
  const bases = CATALOGUE.map((e) => resolveBackend(e.backend, config.backends[e.backend.about.id])).flatMap((e) => (e.enabled ? [e.config.baseUrl] : []));
  if (config.llm) bases.push(config.llm.url);
  if (config.embeddings) bases.push(config.embeddings.url);
  if (config.backends.youtube?.key) bases.push(DATA_API_BASE);
  return bases;
}

export interface Services {
  /** The one outbound fetch of every backend and operation: configured upstreams as configured, anything else guarded. */
  fetch: FetchPort;
  /** Web and video backends. */
  registry: BackendRegistry;
  runner: BackendRunner;
  /** Social platforms run apart: their fetch signs requests in (reddit, bluesky). */
  social: SocialBackends;
  /** The LLM the operator configured (QUARRY_LLM_URL): research's report, search's `include_answer`. */
  llm: Config["llm"];
  /** Longest the LLM may take to write research's report, when set (default 20 s; search's answer takes at most 15 s). */
  llmTimeoutMs: number | undefined;
  /** Whole-request deadlines by operation, ms, when set (each operation has its own default). */
  deadlines: { video?: number; social?: number; research?: number; search?: number };
  /** Every backend's health, all kinds together, for /health. */
  backendHealth(): Record<string, BackendHealth>;
  /** Crawl and batch jobs; null when the ports have no job store. */
  jobs: JobEngine | null;
  /** Each account's plan; an account on a plan QUARRY_PLANS no longer defines is logged once per plan id. */
  accountPlans: AccountPlans;
  /** Collection searches' embeddings hybrid (QUARRY_EMBEDDINGS_URL); absent = BM25 alone. */
  collectionRerank: Reranker | undefined;
}

export function createServices(ports: Ports, config: Config, options: ServiceOptions = {}): Services {
  const { clock } = ports;
  const fetch = createEgress({ raw: ports.fetch, guarded: guardedFetch(ports.pages), upstreams: configuredUpstreams(config) });
  const deadlines = options.deadlines ?? {};
  const registry = createRegistry(config.backends, [...WEB_BACKENDS, ...VIDEO_BACKENDS]);
  // 4 s per engine: a healthy engine answers well within it (SearXNG's own engine timeout is
  // 3 s); a stalled one is cut and reported rather than holding the whole answer.
  const onCall = ports.metrics ? ports.metrics.backendCall.bind(ports.metrics) : undefined;
  const runner = createRunner({ registry, fetch, clock, timeoutMs: 4_000, onCall });
  const social = createSocialBackends(config.backends, { fetch, clock, onCall });
  const plans = accountPlans(config.plans, (message, fields) => ports.logger.warn(fields, message));
  return {
    fetch,
    registry,
    runner,
    social,
    llm: config.llm,
    collectionRerank: collectionReranker(config.embeddings, fetch, ports.cache),
    llmTimeoutMs: options.llmTimeoutMs,
    deadlines,
    // The engine is handed its page reader (scrape's way of reading a page); it imports no operation.
    jobs: ports.jobs ? new JobEngine(ports, config, (req) => readJobPage(ports, req), { ...options.jobs, accountPlans: plans }) : null,
    accountPlans: plans,
    backendHealth: () => ({ ...runner.health("web"), ...runner.health("video"), ...social.runner.health("social") }),
  };
}
