/**
 * POST /v1/map (api.md §9): the URLs of a site, from its sitemaps (robots.txt's `Sitemap:`
 * lines, /sitemap.xml, indexes, gzipped ones) and from the links of the page itself. Every
 * fetch is a guarded page fetch. One unit of the `crawl` group per request.
 */
import { ApiError } from "../../errors.ts";
import { decodeHtml } from "../../extract/decode-html.ts";
import { fetchRobots, pageLinks, readSitemaps } from "../../jobs/site-files.ts";
import { frontierKey } from "../../jobs/url-rules.ts";
import { FetchTimeout, PageFetchError } from "../../net/fetch-errors.ts";
import type { Ports } from "../../ports.ts";
import type { MapRequest } from "./schema.ts";
import { refuseTargets } from "../../schema/targets.ts";

export interface MapResult {
  meta: {
    url: string; results_count: number; duration_ms: number; sitemaps: string[];
    sitemap_errors: Array<{ url: string; error: string }>; from_sitemaps: number; from_page: number; page_error?: string;
  };
  links: Array<{ url: string; title: string | null }>;
}

/** Same site: the host itself, `www.` or not, and with `subdomains` any host below it. */
export function sameSite(startHost: string, subdomains: boolean): (url: string) => boolean {
  const site = startHost.toLowerCase().replace(/^www\./, "");
  return (url) => {
    const host = new URL(url).hostname.toLowerCase().replace(/^www\./, "");
    return host === site || (subdomains && host.endsWith(`.${site}`));
  };
}

export async function mapSite(ports: Pick<Ports, "pages">, req: MapRequest): Promise<MapResult> {
  refuseTargets([{ field: "url", url: req.url }], { schemeOnly: true });
  const t0 = performance.now();
  const start = new URL(req.url);
  const inSite = sameSite(start.hostname, req.include_subdomains);
  const term = req.search?.toLowerCase() || null;
  const found = new Map<string, { url: string; title: string | null }>();
  const add = (raw: string, title: string | null) => {
    const key = frontierKey(raw);
    if (!key || !inSite(key)) return false;
    const prior = found.get(key);
    if (prior) {
      if (!prior.title && title) prior.title = title;
      return false;
    }
    found.set(key, { url: key, title });
    return true;
  };
  // Sitemaps list far more than a caller asks for; a search term filters after reading.
  const budget = term ? Math.max(req.limit * 10, 5000) : req.limit;
  const meta: MapResult["meta"] = { url: req.url, results_count: 0, duration_ms: 0, sitemaps: [], sitemap_errors: [], from_sitemaps: 0, from_page: 0 };

  // timeout_ms bounds the whole request: the page, robots.txt and the sitemaps share it.
  const deadline = t0 + req.timeout_ms;
  const left = () => Math.max(1, Math.round(deadline - performance.now()));
  let pageTimedOut = false;
  if (req.sitemap !== "only") {
    try {
      const page = await ports.pages.fetchPage(req.url, { timeoutMs: left() });
      if (page.status >= 400) meta.page_error = `the page answered ${page.status}`;
      add(page.finalUrl, null);
      for (const link of pageLinks(decodeHtml(page.body, page.contentType), page.finalUrl)) {
        if (add(link.url, link.text || null)) meta.from_page++;
      }
    } catch (err) {
      // A refused start URL is the caller's mistake (422, counts nothing); other failures leave the sitemaps.
      if (err instanceof PageFetchError && err.failure === "egress_refused") throw err;
      pageTimedOut = err instanceof FetchTimeout;
      // Timed out, the page had what was left of timeout_ms (a millisecond or two less): name the caller's figure.
      meta.page_error = pageTimedOut ? `Fetching ${req.url} took the whole timeout_ms of ${req.timeout_ms} ms` : err instanceof Error ? err.message : String(err);
    }
  }
  const outOfTime = req.sitemap !== "skip" && performance.now() >= deadline;
  if (req.sitemap !== "skip" && !outOfTime) {
    const robots = await fetchRobots(ports.pages, start.origin, left());
    const roots = [...robots.sitemaps().filter((s) => URL.canParse(s)), `${start.origin}/sitemap.xml`];
    const read = await readSitemaps(ports.pages, roots, { maxPages: budget, timeoutMs: req.timeout_ms, sameSite: inSite, deadline });
    meta.sitemaps = read.read;
    meta.sitemap_errors = read.failed.filter((f) => !(f.url === `${start.origin}/sitemap.xml` && f.error === "http_404"));
    for (const p of read.pages) if (add(p, null)) meta.from_sitemaps++;
  }
  if (found.size === 0 && meta.page_error && meta.sitemaps.length === 0) {
    // The deadline passing with nothing to return is a 504 (api.md §4), a site that failed a 502.
    const sitemaps = outOfTime ? "timeout_ms ran out before its sitemaps were read" : "the site has no readable sitemap";
    throw new ApiError(pageTimedOut ? "timeout" : "upstream_error", `Nothing to map: ${meta.page_error.replace(/[.!?]+$/, "")}, and ${sitemaps}.`);
  }
  let links = [...found.values()];
  if (term) links = links.filter((l) => l.url.toLowerCase().includes(term) || (l.title ?? "").toLowerCase().includes(term));
  links = links.slice(0, req.limit);
  meta.results_count = links.length;
  meta.duration_ms = Math.round(performance.now() - t0);
  return { meta, links };
}
