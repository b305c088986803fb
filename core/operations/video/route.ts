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
