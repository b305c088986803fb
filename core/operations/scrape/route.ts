/** POST /v1/scrape: one page as clean main content (api.md §6). */
import type { AppDeps } from "../../gateway/context.ts";
import type { RouteDef } from "../../gateway/route.ts";
import { reply } from "../../gateway/headers.ts";
import { ScrapeBody, ScrapeResponse, type ScrapeRequest } from "./schema.ts";
import { scrapeJson } from "./scrape.ts";
import { planCaps } from "../../collections/service.ts";

export function scrapeRoutes({ ports, services }: AppDeps): RouteDef[] {
  const model = { fetch: services.fetch, llm: services.llm, timeoutMs: services.llmTimeoutMs ?? 30_000 };
  return [
    {
      method: "POST",
      path: "/v1/scrape",
      operationId: "scrape",
      summary: "Fetch a page (HTML, PDF, text or an office document) and return its main content as markdown, text, HTML, raw HTML, links, a summary or schema-shaped JSON",
      description:
        "Reads one public http(s) URL and returns its main content without navigation, ads or boilerplate, as markdown (default), text, cleaned HTML, the raw HTML as fetched, every link of the page (each marked `main` when it stands in the main content), a `summary` (the model's at QUARRY_LLM_URL, else extractive) or `json` filled from `json_options.schema` by the model, with the page's title, author, date, language and its own structured data (JSON-LD, microdata, Open Graph). `max_age_ms` bounds how old a cached read may be (0 reads afresh); `meta.cached` and `meta.cache_age_ms` say which it got. A page that answers 404 or 500 is still returned, with `meta.status_code`. Private and internal addresses are refused with 422 `url_not_allowed` and cost nothing. `max_tokens` caps the text. A site that answers with a bot wall (a challenge or captcha page) is escalated with `proxy: \"auto\"` (the default): rendered, then read through the operator's proxies (QUARRY_PROXIES); `meta.fetch_path` lists the steps, the host's working step is remembered, and a read walled on every step is a 502 `blocked`, free. `location` reads through a proxy of that country. `collection` indexes the page in one of the account's collections (api.md §11), said in `meta.collection`. One unit of the `scrape` group, whatever the path.",
      example: { url: "https://example.org/article", formats: ["markdown"], max_tokens: 2000 },
      auth: true,
      scope: "scrape",
      group: "scrape",
      body: ScrapeBody,
      status: 200,
      response: ScrapeResponse,
      errors: ["not_found", "index_full", "service_unavailable", "url_not_allowed", "unsupported_content", "model_unavailable", "upstream_error", "blocked", "timeout"],
      // As JSON text: a cached read is sent from the cache's text, unparsed (scrape.ts).
      handler: async (c) => reply(c, await scrapeJson(ports, c.get("body") as ScrapeRequest, c.get("auth")?.account.name, model, c.get("auth") ? planCaps(c.get("auth")!.plan) : null)),
    },
  ];
}
