/** POST /v1/video/search (spec: Endpoints; api.md §2 scope `search`, usage group `video`). */
import type { AppDeps } from "../../gateway/context.ts";
import type { RouteDef } from "../../gateway/route.ts";
import { VideoSearchBody, VideoSearchResponse, type VideoSearchRequest } from "./schema.ts";
import { videoSearch, type VideoSearchDeps } from "./video.ts";

export function videoRoutes({ ports, config, services }: AppDeps): RouteDef[] {
  const { registry, runner, fetch } = services;
  const youtubeKey = config.backends.youtube?.key?.trim();
  const deps: VideoSearchDeps = {
    registry,
    runner,
    fetch,
    clock: ports.clock,
    deadlineMs: services.deadlines.video,
    // The Invidious fallback is tried only when `QUARRY_INVIDIOUS_URL` enables it.
    fallback: { registry, runner },
    youtubeData: youtubeKey ? { key: youtubeKey } : undefined,
  };
  return [
    {
      method: "POST",
      path: "/v1/video/search",
      operationId: "videoSearch",
      summary: "Search videos, with token-budgeted transcript excerpts",
      description:
        "Searches YouTube and returns videos with exact duration and date filters, a score, and for tiers `summary` and up a transcript excerpt focused on the query within the tier's token budget (`transcript_snippet`, null when the video has no transcript). Use it when the answer is likely said in a talk, tutorial or interview. One unit of the `video` group.",
      example: { query: "postgres advisory locks explained", max_results: 5, tier: "summary", max_duration: 1800 },
      auth: true,
      scope: "search",
      group: "video",
      body: VideoSearchBody,
      status: 200,
      response: VideoSearchResponse,
      errors: ["upstream_error", "timeout"],
      handler: async (c) => c.json(await videoSearch(deps, c.get("body") as VideoSearchRequest)),
    },
  ];
}
