/**
 * Per-app services, built once from the backend catalogue and the configuration: one registry
 * and one runner for web and video, one for the social platforms (its fetch signs in), and the
 * ready dependencies of every operation. Routes only call operations with these, so circuit
 * breakers and success rates see all traffic, and /health reports every backend.
 */
import type { Config } from "./config.ts";
import { VIDEO_BACKENDS, WEB_BACKENDS } from "./backends/catalogue.ts";
import { createRegistry, type BackendRegistry } from "./backends/registry.ts";
import { createRunner, type BackendHealth, type BackendRunner } from "./backends/runner.ts";
import type { Ports } from "./ports.ts";
import { createSocialBackends, type SocialBackends } from "./backends/social/registry.ts";
import type { ResearchDeps } from "./operations/research/research.ts";
import type { SocialResearchDeps } from "./operations/social/social.ts";
import type { VideoSearchDeps } from "./operations/video/video.ts";

export interface ServiceOptions {
  /** Whole-request deadlines by operation, ms (each operation has its own default). */
  deadlines?: { video?: number; social?: number; research?: number };
  /** Longest the research model may take to write its report (default 20 s). */
  llmTimeoutMs?: number;
}

export interface Services {
  /** Web and video backends. */
  registry: BackendRegistry;
  runner: BackendRunner;
  /** Social platforms run apart: their fetch signs requests in (reddit, bluesky). */
  social: SocialBackends;
  video: VideoSearchDeps;
  socialResearch: SocialResearchDeps;
  research: ResearchDeps;
  /** Every backend's health, all kinds together, for /health. */
  backendHealth(): Record<string, BackendHealth>;
}

export function createServices(ports: Ports, config: Config, options: ServiceOptions = {}): Services {
  const { fetch, clock } = ports;
  const deadlines = options.deadlines ?? {};
  const registry = createRegistry(config.backends, [...WEB_BACKENDS, ...VIDEO_BACKENDS]);
  // 4 s per engine: a healthy engine answers well within it (SearXNG's own engine timeout is
  // 3 s); a stalled one is cut and reported rather than holding the whole answer.
  const runner = createRunner({ registry, fetch, clock, timeoutMs: 4_000 });
  const social = createSocialBackends(config.backends, { fetch, clock });
  const youtubeKey = config.backends.youtube?.key?.trim();
  return {
    registry,
    runner,
    social,
    video: {
      registry,
      runner,
      fetch,
      clock,
      deadlineMs: deadlines.video,
      // The Invidious fallback is tried only when `QUARRY_INVIDIOUS_URL` enables it.
      fallback: { registry, runner },
      youtubeData: youtubeKey ? { key: youtubeKey } : undefined,
    },
    socialResearch: { ...social, fetch, clock, ...(deadlines.social ? { deadlineMs: deadlines.social } : {}) },
    research: {
      ports,
      runner,
      llm: config.llm,
      embeddings: config.embeddings,
      ...(options.llmTimeoutMs ? { llmTimeoutMs: options.llmTimeoutMs } : {}),
      ...(deadlines.research ? { deadlineMs: deadlines.research } : {}),
    },
    backendHealth: () => ({ ...runner.health("web"), ...runner.health("video"), ...social.runner.health("social") }),
  };
}
