/** The compatibility layers' translations, as pure functions: what reaches native search and scrape. */
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { fieldsOf, ignoredOptions } from "../../core/compat/http.ts";
import { toNativeSearch as firecrawlSearch, FirecrawlSearchBody } from "../../core/compat/firecrawl/search.ts";
import { ScrapeOptions, toNativeScrape } from "../../core/compat/firecrawl/scrape.ts";
import { TavilySearchBody, toNativeSearch as tavilySearch } from "../../core/compat/tavily/search.ts";
import { SearchBody } from "../../core/operations/search/schema.ts";
import { ScrapeBody } from "../../core/operations/scrape/schema.ts";

describe("Tavily search → native search", () => {
  it("passes every option native search has under the same name, and the result is a valid native request", () => {
    const body = v.parse(TavilySearchBody, {
      query: "lsm compaction", search_depth: "advanced", max_results: 0, include_answer: "advanced", include_raw_content: "text",
      chunks_per_source: 2, start_date: "2025-01-01", end_date: "2025-02-01", topic: "news", country: "germany",
      include_images: true, include_image_descriptions: true, include_favicon: true, time_range: "w", include_domains: ["example.org"],
      auto_parameters: true,
    });
    const plan = tavilySearch(body);
    expect(plan.native).toMatchObject({ query: "lsm compaction", tier: "summary", max_results: 1, freshness: "week", include_answer: "advanced", include_raw_content: "text", chunks_per_source: 2, start_date: "2025-01-01", end_date: "2025-02-01", topic: "news", country: "germany", include_images: true, include_image_descriptions: true, include_favicon: true, include_domains: ["example.org"] });
    expect(v.safeParse(SearchBody, plan.native).success).toBe(true);
    expect(ignoredOptions(body as Record<string, unknown>, plan.honoured)).toEqual(["auto_parameters"]);
  });

  it("names native search's fields through its pipe", () => {
    expect([...fieldsOf(SearchBody)]).toEqual(expect.arrayContaining(["query", "include_answer", "topic", "country"]));
  });
});

describe("Firecrawl → native", () => {
  it("search: limit, tbs, lang, domains, news and markdown pages; the rest named", () => {
    const plan = firecrawlSearch(v.parse(FirecrawlSearchBody, { query: "q", limit: 50, tbs: "qdr:m", lang: "de", country: "us", sources: ["web", "news"], includeDomains: ["example.org"], scrapeOptions: { formats: ["markdown", "summary"] }, categories: ["github"], origin: "js-sdk@4" }));
    expect(plan.native).toEqual({ query: "q", tier: "full", max_results: 20, freshness: "month", language: "de", include_domains: ["example.org"], topic: "news" });
    expect(v.safeParse(SearchBody, plan.native).success).toBe(true);
    expect(plan.ignored).toEqual(["categories", "limit above 20", "scrapeOptions.formats.summary"]);
  });

  it("scrape: formats and actions translate; without a browser, what needs one is named instead of refused", () => {
    const opts = v.parse(ScrapeOptions, { formats: ["markdown", "rawHtml", "links", "screenshot", { type: "json", prompt: "the price" }, "branding"], waitFor: 500, actions: [{ type: "click", selector: "#more" }, { type: "executeJavascript", script: "1" }], onlyMainContent: false, timeout: 90_000 });
    const withBrowser = toNativeScrape("https://example.org/", opts, [], true);
    expect(withBrowser.native).toEqual({ url: "https://example.org/", formats: ["markdown", "raw_html", "links", "screenshot", "json"], json_options: { prompt: "the price" }, only_main_content: false, timeout_ms: 60_000, wait_for: 500, actions: [{ type: "click", selector: "#more" }] });
    expect(v.safeParse(ScrapeBody, withBrowser.native).success).toBe(true);
    expect(withBrowser.ignored).toEqual(["actions.executeJavascript", "formats.branding"]);
    // Firecrawl takes a 90 s timeout; Quarry applies its 60 s and says so.
    expect(withBrowser.clamped).toEqual([{ option: "timeout", requested: 90_000, applied: 60_000, reason: "Quarry gives a page at most 60000 ms" }]);
    const without = toNativeScrape("https://example.org/", opts, [], false);
    expect(without.native).toEqual({ url: "https://example.org/", formats: ["markdown", "raw_html", "links", "json"], json_options: { prompt: "the price" }, only_main_content: false, timeout_ms: 60_000 });
    expect(without.ignored).toEqual(expect.arrayContaining(["actions (no browser on this server)", "waitFor (no browser on this server)", "formats.screenshot (no browser on this server)"]));
  });
});
