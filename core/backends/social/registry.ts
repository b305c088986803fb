/**
 * The social backends, in the order they are reported, and the wiring of their registry and
 * runner: the runner's fetch signs requests of the platforms that sign in first (auth.ts).
 */
import type { Clock, FetchPort } from "../../ports.ts";
import { createRegistry, type BackendRegistry, type BackendsSettings } from "../registry.ts";
import { createRunner, type BackendRunner, type RunnerOptions } from "../runner.ts";
import { createTokenCache, withPlatformAuth, type TokenExchange } from "./auth.ts";
import { bluesky, blueskyAuth } from "./bluesky.ts";
import { github } from "./github.ts";
import { hackernews } from "./hackernews.ts";
import { lemmy } from "./lemmy.ts";
import { mastodon } from "./mastodon.ts";
import { reddit, redditAuth } from "./reddit.ts";
import { stackexchange } from "./stackexchange.ts";
import type { SocialBackend } from "./types.ts";

export const SOCIAL_BACKENDS: readonly SocialBackend[] = [hackernews, stackexchange, github, lemmy, reddit, bluesky, mastodon];
export const TOKEN_EXCHANGES: readonly TokenExchange[] = [redditAuth, blueskyAuth];

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
