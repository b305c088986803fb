/**
 * The social backends, in the order they are reported, and the wiring of their registry and
 * runner: the runner's fetch signs requests of the platforms that sign in first (auth.ts).
 */
import type { Clock, FetchPort } from "../../ports.ts";
import { createRegistry, type BackendRegistry, type BackendsSettings } from "../registry.ts";
import { createRunner, type BackendRunner, type RunnerOptions } from "../runner.ts";
import { SOCIAL_BACKENDS, TOKEN_EXCHANGES } from "../catalogue.ts";
import { createTokenCache, withPlatformAuth } from "./auth.ts";


export interface SocialBackendsOptions extends Omit<RunnerOptions, "registry"> {
  fetch: FetchPort;
  clock: Clock;
}

export interface SocialBackends {
  registry: BackendRegistry;
  runner: BackendRunner;
}

/** Registry of the social backends from the operator's settings, and a runner whose fetch signs in. */
export function createSocialBackends(settings: BackendsSettings, options: SocialBackendsOptions): SocialBackends {
  const registry = createRegistry(settings, SOCIAL_BACKENDS);
  const fetch = withPlatformAuth(options.fetch, options.clock, registry, TOKEN_EXCHANGES, createTokenCache());
  return { registry, runner: createRunner({ ...options, registry, fetch }) };
}
