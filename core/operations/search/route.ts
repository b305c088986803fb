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
      description:
        "Asks every configured web engine (SearXNG, DuckDuckGo, Wikipedia, Brave) at once under one deadline, merges and deduplicates their results by normalised URL, and ranks them (score 0–1). `meta.backends` says how each engine did. Tier `basic` returns the engines' snippets; `summary`, `detailed` and `full` also read the top pages into query-focused excerpts (≤ 200 / 800 tokens) or whole pages (≤ 4,000 tokens). " +
        "Options agent clients ask for, under Tavily's names: `include_answer` (true/`basic`/`advanced`: a few sentences citing result numbers like [1][3], written by the configured model or extractive, `meta.answer` says which), `include_raw_content` (true/`markdown`/`text`: each result's whole page, ≤ 4,000 tokens), `chunks_per_source` (1–5 query-relevant passages per result in `chunks`), `start_date`/`end_date` (YYYY-MM-DD; undated results are dated from their pages where they say, results outside are dropped and counted in `meta.date_filter`, still undated ones are dropped unless `undated: \"keep\"`, and `meta.undated` says which), `topic` (`general`, `news`: engines without a news search are skipped; `finance` is searched as general), `time_range` (same as `freshness`), `country` (a name or ISO code), `include_images` (`images[]`, with alt-text descriptions if `include_image_descriptions`), `include_favicon` (`favicon` per result). " +
        "An option that an engine cannot apply is named in `meta.ignored` (`{option, reason, backends?}`), never silently dropped. Use it to find pages; use scrape to read one page you already know. One unit of the `search` group.",
      example: { query: "how do sliding window rate limits work", tier: "summary", max_results: 5, include_answer: true, chunks_per_source: 3, include_favicon: true },
      auth: true,
      scope: "search",
      group: "search",
      body: SearchBody,
      status: 200,
      response: SearchResponseSchema,
      errors: ["upstream_error", "timeout"],
      handler: async (c) => c.json(await search(ports, services, c.get("body") as SearchRequest, c.get("auth")?.account.name)),
    },
  ];
}
