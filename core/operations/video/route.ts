/** POST /v1/video/search (spec: Endpoints; api.md §2 scope `search`, usage group `video`). */
import { ApiError } from "../../errors.ts";
import type { AppDeps } from "../../gateway/context.ts";
import { createRegistry, type BackendRegistry } from "../../backends/registry.ts";
import { createRunner, type BackendRunner } from "../../backends/runner.ts";
import { youtube } from "../../backends/youtube/search.ts";
import { invidious } from "../../backends/youtube/invidious.ts";
import type { DataApiSettings } from "./enrich.ts";
import type { RouteDef } from "../../routes/route.ts";
import { VideoSearchBody, VideoSearchResponse, type VideoSearchRequest } from "./schema.ts";
import { videoSearch, type VideoSearchDeps } from "./video-search.ts";

export interface VideoRouteOptions {
  /** Share a registry and runner (e.g. with health); by default the route builds its own. */
  registry?: BackendRegistry;
  runner?: BackendRunner;
  deadlineMs?: number;
  /** Base URL of the YouTube Data API (default https://www.googleapis.com); for tests and proxies. */
  dataApiBaseUrl?: string;
}

/** The video backends' registry from the operator's settings (`QUARRY_YOUTUBE_URL`, `QUARRY_INVIDIOUS_URL`). */
export function videoRegistry(config: AppDeps["config"]): BackendRegistry {
  return createRegistry({ youtube: config.backends.youtube, invidious: config.backends.invidious }, [youtube, invidious]);
}

/**
 * The Invidious fallback (off unless `QUARRY_INVIDIOUS_URL` is set): from the shared registry
 * when it holds `invidious`, else from a registry of its own over the same settings.
 */
function invidiousFallback(config: AppDeps["config"], ports: AppDeps["ports"], registry: BackendRegistry, runner: BackendRunner) {
  if (registry.get("invidious")) return { registry, runner };
  if (!config.backends.invidious?.url) return undefined;
  const own = createRegistry({ invidious: config.backends.invidious }, [invidious]);
  return { registry: own, runner: createRunner({ registry: own, fetch: ports.fetch, clock: ports.clock }) };
}

export function videoRoutes({ ports, config }: AppDeps, options: VideoRouteOptions = {}): RouteDef[] {
  const registry = options.registry ?? videoRegistry(config);
  const runner = options.runner ?? createRunner({ registry, fetch: ports.fetch, clock: ports.clock });
  const key = config.backends.youtube?.key?.trim();
  const youtubeData: DataApiSettings | undefined = key ? { key, ...(options.dataApiBaseUrl ? { baseUrl: options.dataApiBaseUrl } : {}) } : undefined;
  const deps: VideoSearchDeps = {
    runner,
    registry,
    fetch: ports.fetch,
    clock: ports.clock,
    deadlineMs: options.deadlineMs,
    fallback: invidiousFallback(config, ports, registry, runner),
    youtubeData,
  };
  return [
    {
      method: "POST",
      path: "/v1/video/search",
      summary: "Search videos, with token-budgeted transcript excerpts",
      auth: true,
      scope: "search",
      group: "video",
      body: VideoSearchBody,
      status: 200,
      response: VideoSearchResponse,
      errors: ["upstream_error", "timeout"],
      handler: async (c) => {
        const outcome = await videoSearch(deps, c.get("body") as VideoSearchRequest);
        if (!outcome.ok) throw new ApiError(outcome.error.code, outcome.error.message);
        return c.json(outcome.body);
      },
    },
  ];
}
