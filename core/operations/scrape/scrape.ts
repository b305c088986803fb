/**
 * POST /v1/scrape (api.md §6): fetch one page through the guarded page port, turn it into
 * clean main content, and cache the answer by URL and options.
 */
import { librariesLoaded, loadLibraries } from "../../lazy.ts";
import { countTokens } from "../../budget/tokens.ts";
import { ApiError } from "../../errors.ts";
import type { Ports } from "../../ports.ts";
import { needsBrowser, readPage } from "../../pages/read-page.ts";
import { checkProxyChoice } from "../../pages/escalate.ts";
import { pageData, type PageData } from "../../pages/page-data.ts";
import { NEEDS_BROWSER, waitOutlastsTimeout } from "../../schema/render-fields.ts";
import type { ScrapeRequest } from "./schema.ts";
import { refuseTargets } from "../../schema/targets.ts";
import { checkFormats, modelFormats, type ScrapeModel } from "./model-formats.ts";
import { trackChanges, type PageChanges } from "../../changes/track.ts";
import { addDocuments, missing, unavailable } from "../../collections/service.ts";
import type { IndexCaps } from "../../ports/collections.ts";

const CACHE_TTL_SECONDS = 15 * 60;

/** The page's metadata and the requested formats (core/pages/page-data.ts, shared with job pages), and the model's formats. */
export type ScrapeData = Omit<PageData, "rendered" | "render_note"> & { summary?: string; json?: unknown; changes?: PageChanges | null };

export type { ScrapeModel };

export interface ScrapeResult {
  meta: {
    url: string; final_url: string; status_code: number; content_type: string | null; duration_ms: number; tokens_used: number; cached: boolean;
    cache_age_ms: number | null; rendered: boolean; render_note?: string; summary?: "llm" | "extractive"; summary_error?: string;
    fetch_path: string[]; location_note?: string;
    collection?: ScrapeIndexed;
  };
  data: ScrapeData;
}

/** What `collection` did with the page: indexed under its URL, or why not. */
export interface ScrapeIndexed {
  name: string;
  document: string;
  outcome: "added" | "replaced" | "unchanged" | "skipped";
  reason?: string;
}

/** What the cache keeps: the answer and when its page was read (ms since the epoch, the app's clock). */
interface CachedRead {
  result: ScrapeResult;
  read_at: number;
}

function cacheKey(req: ScrapeRequest): string {
  const json = req.json_options ? [req.json_options.schema ?? null, req.json_options.prompt ?? null] : null;
  // `scrape2:` since entries hold {result, read_at}: a version that cached bare answers (sharing a Redis cache in a rolling upgrade) never reads one.
  const via = req.proxy !== "auto" || req.location ? [[req.proxy, req.location ?? null]] : [];
  return `scrape2:${JSON.stringify([req.url, [...req.formats].sort(), req.only_main_content, req.max_tokens ?? null, req.render, req.wait_for ?? null, ...(json ? [json] : []), ...via])}`;
}

/**
 * A cached read this request may have: any within the cache's 15 minutes without `max_age_ms`,
 * one no older than it with it, none with 0 (the page is read afresh, and cached for the next).
 */
async function cachedRead(ports: Ports, key: string, maxAge: number | undefined): Promise<{ result: ScrapeResult; age: number } | null> {
  if (maxAge === 0) return null;
  const hit = await ports.cache.get<CachedRead>(key);
  if (!hit || typeof hit.read_at !== "number" || !hit.result) return null;
  const age = Math.max(0, ports.clock.now() - hit.read_at);
  return maxAge === undefined || age <= maxAge ? { result: hit.result, age } : null;
}

/**
 * A target that answers, even with 404 or 500, has answered: its status (`meta.status_code`)
 * and its page are the result, as a browser would show them. Only a target that cannot be
 * reached is a 502. Error pages, screenshots and pages put through actions are not cached.
 */
export async function scrape(ports: Ports, req: ScrapeRequest, account?: string, model: ScrapeModel | null = null, caps: IndexCaps | null = null): Promise<ScrapeResult> {
  if (!librariesLoaded()) await loadLibraries();
  refuseTargets([{ field: "url", url: req.url }], { schemeOnly: true });
  const browserOnly = needsBrowser(req);
  if (req.render === "never" && browserOnly) {
    throw new ApiError("invalid_request", NEEDS_BROWSER);
  }
  const outlasts = waitOutlastsTimeout(req);
  if (outlasts) throw outlasts;
  // `json` without a model, or without a schema or prompt, is refused before anything is read.
  checkFormats(req, model);
  checkProxyChoice(ports, req.proxy);
  const tracking = req.formats.includes("changes");
  if (req.changes_options && !tracking) throw new ApiError("invalid_request", "changes_options needs the changes format in formats.");
  if (tracking && !ports.reads) throw new ApiError("service_unavailable", "The changes format needs a store for earlier reads, and this server has none.");
  // The collection must be the account's before anything is read (a 404, as on every collection route).
  if (req.collection) {
    if (!ports.collections) throw unavailable();
    if (!account || !(await ports.collections.get(account, req.collection))) throw missing(req.collection);
  }
  const t0 = performance.now();
  // A changes read compares what the page says now: never a cached read, and never cached itself.
  const cacheable = !tracking && !req.actions?.length && !req.formats.includes("screenshot");
  const key = cacheKey(req);
  // A page indexed in a collection is what it says now: never a cached read.
  const cached = cacheable && !req.collection ? await cachedRead(ports, key, req.max_age_ms) : null;
  if (cached) return { ...cached.result, meta: { ...cached.result.meta, cached: true, cache_age_ms: cached.age, duration_ms: Math.round(performance.now() - t0) } };

  const host = new URL(req.url).hostname;
  // The model's formats are made from the page's markdown, asked for the reading if not for the answer.
  const byModel = req.formats.some((f) => f === "summary" || f === "json");
  const readFormats = (byModel || tracking || req.collection) && !req.formats.includes("markdown") ? [...req.formats, "markdown" as const] : req.formats;
  let got;
  try {
    got = await readPage(ports, { ...req, formats: readFormats, ...(account ? { account } : {}) });
  } catch (err) {
    await ports.sources.record(host, { fetched: true, ok: false }).catch(() => {});
    throw err;
  }
  const { read, content, fetchPath, locationNote } = got;
  if (!content) {
    throw new ApiError("unsupported_content", `Content type ${read.contentType ?? "(none)"} is not supported; Quarry reads HTML, PDF, plain text and office documents (DOCX, XLSX, PPTX, ODT, ODS, ODP).`);
  }
  const readAt = ports.clock.now();
  const data: ScrapeData = pageData(read, content, req.formats.filter((f) => f !== "summary" && f !== "json" && f !== "changes"), { maxTokens: req.max_tokens });
  if (tracking) {
    const ask = { tag: req.changes_options?.tag ?? "", diff: req.changes_options?.diff ?? false };
    data.changes = await trackChanges(ports.reads!, account ?? "", req.url, ask, { status: read.status, markdown: content.markdown }, readAt);
  }
  let tokens = 0;
  for (const f of req.formats) if (f === "markdown" || f === "text" || f === "html" || f === "raw_html") tokens += countTokens(data[f]!);
  const made = byModel ? await modelFormats(req, { title: content.title, markdown: content.markdown }, model) : null;
  if (made) {
    Object.assign(data, made.data);
    tokens += made.tokens;
  }
  const answered = read.status < 400;
  let indexed: ScrapeIndexed | undefined;
  if (req.collection) {
    indexed = { name: req.collection, document: req.url, outcome: "skipped" };
    if (!answered) indexed.reason = `the page answered HTTP ${read.status}`;
    else if (!content.markdown.trim()) indexed.reason = "the page has no text";
    else {
      // One document, all or nothing: past the plan's index_documents or index_bytes this is a 403 index_full and nothing is added.
      const out = await addDocuments(ports.collections!, account!, req.collection, [{ id: req.url, url: req.url, title: content.title, markdown: content.markdown }], caps, ports.clock.now());
      indexed.outcome = out.added.length ? "added" : out.replaced.length ? "replaced" : "unchanged";
    }
  }
  await ports.sources.record(new URL(read.finalUrl).hostname, { fetched: true, ok: answered }).catch(() => {});
  const result: ScrapeResult = {
    meta: {
      url: req.url, final_url: read.finalUrl, status_code: read.status, content_type: read.contentType,
      duration_ms: Math.round(performance.now() - t0), tokens_used: tokens, cached: false, cache_age_ms: null,
      rendered: read.rendered, ...(read.note ? { render_note: read.note } : {}), ...(made?.meta ?? {}),
      fetch_path: fetchPath, ...(locationNote ? { location_note: locationNote } : {}),
      ...(indexed ? { collection: indexed } : {}),
    },
    data,
  };
  if (answered && cacheable) await ports.cache.set(key, { result: indexed ? { ...result, meta: withoutCollection(result.meta) } : result, read_at: readAt } satisfies CachedRead, CACHE_TTL_SECONDS).catch(() => {});
  return result;
}

function withoutCollection(meta: ScrapeResult["meta"]): ScrapeResult["meta"] {
  const { collection: _, ...rest } = meta;
  return rest;
}
