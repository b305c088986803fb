/**
 * POST /v1/scrape (api.md §6): fetch one page through the guarded page port, turn it into
 * clean main content, and cache the answer by URL and options.
 */
import { loadLibraries } from "../../lazy.ts";
import { countTokens } from "../../budget/tokens.ts";
import { ApiError } from "../../errors.ts";
import type { Ports } from "../../ports.ts";
import { needsBrowser, readPage } from "../../pages/read-page.ts";
import { pageData, type PageData } from "../../pages/page-data.ts";
import { NEEDS_BROWSER, waitOutlastsTimeout } from "../../schema/render-fields.ts";
import type { ScrapeRequest } from "./schema.ts";
import { refuseTargets } from "../../schema/targets.ts";

const CACHE_TTL_SECONDS = 15 * 60;

/** The page's metadata and the requested formats (core/pages/page-data.ts, shared with job pages). */
export type ScrapeData = Omit<PageData, "rendered" | "render_note">;

export interface ScrapeResult {
  meta: {
    url: string; final_url: string; status_code: number; content_type: string | null; duration_ms: number; tokens_used: number; cached: boolean;
    rendered: boolean; render_note?: string;
  };
  data: ScrapeData;
}

function cacheKey(req: ScrapeRequest): string {
  return `scrape:${JSON.stringify([req.url, [...req.formats].sort(), req.only_main_content, req.max_tokens ?? null, req.render, req.wait_for ?? null])}`;
}

/**
 * A target that answers, even with 404 or 500, has answered: its status (`meta.status_code`)
 * and its page are the result, as a browser would show them. Only a target that cannot be
 * reached is a 502. Error pages, screenshots and pages put through actions are not cached.
 */
export async function scrape(ports: Ports, req: ScrapeRequest, account?: string): Promise<ScrapeResult> {
  await loadLibraries();
  refuseTargets([{ field: "url", url: req.url }], { schemeOnly: true });
  const browserOnly = needsBrowser(req);
  if (req.render === "never" && browserOnly) {
    throw new ApiError("invalid_request", NEEDS_BROWSER);
  }
  const outlasts = waitOutlastsTimeout(req);
  if (outlasts) throw outlasts;
  const t0 = performance.now();
  const cacheable = !req.actions?.length && !req.formats.includes("screenshot");
  const key = cacheKey(req);
  const cached = cacheable ? await ports.cache.get<ScrapeResult>(key) : null;
  if (cached) return { ...cached, meta: { ...cached.meta, cached: true, duration_ms: Math.round(performance.now() - t0) } };

  const host = new URL(req.url).hostname;
  let got;
  try {
    got = await readPage(ports, account ? { ...req, account } : req);
  } catch (err) {
    await ports.sources.record(host, { fetched: true, ok: false }).catch(() => {});
    throw err;
  }
  const { read, content } = got;
  if (!content) {
    throw new ApiError("unsupported_content", `Content type ${read.contentType ?? "(none)"} is not supported; Quarry reads HTML, PDF and plain text.`);
  }
  const data: ScrapeData = pageData(read, content, req.formats, { maxTokens: req.max_tokens });
  let tokens = 0;
  for (const f of req.formats) if (f === "markdown" || f === "text" || f === "html") tokens += countTokens(data[f]!);
  const answered = read.status < 400;
  await ports.sources.record(new URL(read.finalUrl).hostname, { fetched: true, ok: answered }).catch(() => {});
  const result: ScrapeResult = {
    meta: {
      url: req.url, final_url: read.finalUrl, status_code: read.status, content_type: read.contentType,
      duration_ms: Math.round(performance.now() - t0), tokens_used: tokens, cached: false,
      rendered: read.rendered, ...(read.note ? { render_note: read.note } : {}),
    },
    data,
  };
  if (answered && cacheable) await ports.cache.set(key, result, CACHE_TTL_SECONDS).catch(() => {});
  return result;
}
