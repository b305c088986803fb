/**
 * Per-app services shared by the operations and /health: one backend registry (from the
 * configuration) and one runner, so circuit breakers and success rates see all traffic.
 */
import type { Config } from "./config.ts";
import type { Backend } from "./backends/types.ts";
import { createRegistry, WEB_BACKENDS, type BackendRegistry } from "./backends/registry.ts";
import { createRunner, type BackendHealth, type BackendRunner } from "./backends/runner.ts";
import type { Ports } from "./ports.ts";
import { createSocialBackends, type SocialBackends } from "./backends/social/registry.ts";

export interface Services {
  registry: BackendRegistry;
  runner: BackendRunner;
  /** Social platforms run apart: their fetch signs requests in (reddit, bluesky). */
  social: SocialBackends;
  /** Every backend's health, all kinds together, for /health. */
  backendHealth(): Record<string, BackendHealth>;
}

export function createServices(ports: Ports, config: Config, extraBackends: readonly Backend<unknown>[] = []): Services {
  const registry = createRegistry(config.backends, [...WEB_BACKENDS, ...extraBackends]);
  // 4 s per engine: a healthy engine answers well within it (SearXNG's own engine timeout is
  // 3 s); a stalled one is cut and reported rather than holding the whole answer.
  const runner = createRunner({ registry, fetch: ports.fetch, clock: ports.clock, timeoutMs: 4_000 });
  const social = createSocialBackends(config.backends, { fetch: ports.fetch, clock: ports.clock });
  return {
    registry,
    runner,
    social,
    backendHealth: () => ({ ...runner.health("web"), ...runner.health("video"), ...social.runner.health("social") }),
  };
}
