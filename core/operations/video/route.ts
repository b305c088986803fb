/** POST /v1/video/search (spec: Endpoints; api.md §2 scope `search`, usage group `video`). */
import type { AppDeps } from "../../gateway/context.ts";
import type { RouteDef } from "../../gateway/route.ts";
import { VideoSearchBody, VideoSearchResponse, type VideoSearchRequest } from "./schema.ts";
import { videoSearch } from "./video.ts";

export function videoRoutes({ services }: AppDeps): RouteDef[] {
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
      handler: async (c) => c.json(await videoSearch(services.video, c.get("body") as VideoSearchRequest)),
    },
  ];
}
