/** POST /v1/search (api.md §6). */
import * as v from "valibot";
import type { AppDeps } from "../gateway/context.ts";
import { search } from "../operations/search/search.ts";
import { SearchBody, type SearchRequest } from "../operations/search/schema.ts";
import type { Services } from "../services.ts";
import type { RouteDef } from "./route.ts";

const BackendStatus = v.object({ status: v.picklist(["ok", "error", "timeout", "skipped", "disabled"]), results: v.number(), latency_ms: v.number(), error: v.optional(v.string()) });
export const SearchResponseSchema = v.object({
  meta: v.object({
    query: v.string(), results_count: v.number(), tokens_used: v.number(), duration_ms: v.number(), cached: v.boolean(),
    backends: v.record(v.string(), BackendStatus),
  }),
  results: v.array(v.object({
    title: v.string(), url: v.string(), content: v.string(), score: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
    published_at: v.nullable(v.string()), source: v.string(), engines: v.array(v.string()),
    excerpt: v.nullable(v.string()), raw_content: v.nullable(v.string()),
  })),
});

export function searchRoutes({ ports }: AppDeps, services: Services): RouteDef[] {
  return [
    {
      method: "POST",
      path: "/v1/search",
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
