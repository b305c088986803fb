/** POST /v1/scrape: one page as clean main content (api.md §6). */
import * as v from "valibot";
import type { AppDeps } from "../gateway/context.ts";
import { scrape, ScrapeBody, type ScrapeRequest } from "../operations/scrape/scrape.ts";
import type { RouteDef } from "./route.ts";

const Nullable = v.nullable(v.string());
export const ScrapeResponse = v.object({
  meta: v.object({
    url: v.string(), final_url: v.string(), status_code: v.number(), content_type: Nullable,
    duration_ms: v.number(), tokens_used: v.number(), cached: v.boolean(),
  }),
  data: v.object({
    title: Nullable, description: Nullable, author: Nullable, published_at: Nullable, language: Nullable, site_name: Nullable,
    markdown: v.optional(v.string()), text: v.optional(v.string()), html: v.optional(v.string()),
    links: v.optional(v.array(v.object({ text: v.string(), url: v.string() }))),
  }),
});

export function scrapeRoutes({ ports }: AppDeps): RouteDef[] {
  return [
    {
      method: "POST",
      path: "/v1/scrape",
      summary: "Fetch a page (HTML, PDF or text) and return its main content as markdown, text, HTML or links",
      auth: true,
      scope: "scrape",
      group: "scrape",
      body: ScrapeBody,
      status: 200,
      response: ScrapeResponse,
      errors: ["url_not_allowed", "unsupported_content", "upstream_error", "timeout"],
      handler: async (c) => c.json(await scrape(ports, c.get("body") as ScrapeRequest)),
    },
  ];
}
