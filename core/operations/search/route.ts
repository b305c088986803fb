/** POST /v1/search (api.md §6). */
import type { AppDeps } from "../../gateway/context.ts";
import type { RouteDef } from "../../gateway/route.ts";
import { SearchBody, SearchResponseSchema, type SearchRequest } from "./schema.ts";
import { search } from "./search.ts";

export function searchRoutes({ ports, services }: AppDeps): RouteDef[] {
  return [
    {
      method: "POST",
      path: "/v1/search",
      operationId: "search",
      summary: "Web search across several engines at once: merged, deduplicated, ranked, with honest per-engine status",
      auth: true,
      scope: "search",
      group: "search",
      body: SearchBody,
      status: 200,
      response: SearchResponseSchema,
      errors: ["upstream_error", "timeout"],
      handler: async (c) => c.json(await search(ports, services, c.get("body") as SearchRequest)),
    },
  ];
}
