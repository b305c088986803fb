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

/**
 * What the cache keeps: `[read_at, duration_at, age_at, answer]`. The answer is the one a hit
 * sends, `meta.cached` true and its `duration_ms` and `cache_age_ms` 0; `duration_at` and
 * `age_at` are where those two zeros stand in `JSON.stringify(answer)` (-1 if they could not be
 * placed). A cache that hands out the entry's JSON text (`CachePort.getJson`, the in-process LRU)
 * lets a hit answer by writing its two numbers into that text: no parse of the entry and no
 * serialisation of the answer per hit (issue #33), and the same bytes as serialising it.
 * `read_at` is when the page was read (ms since the epoch, the app's clock).
 */
type CachedRead = [readAt: number, durationAt: number, ageAt: number, answer: ScrapeResult];

/** The cache key of a scrape request (exported for tests). */
export function cacheKey(req: ScrapeRequest): string {
  const json = req.json_options ? [req.json_options.schema ?? null, req.json_options.prompt ?? null] : null;
  // `scrape2:` since entries hold {result, read_at}: a version that cached bare answers (sharing a Redis cache in a rolling upgrade) never reads one.
  // Entries are arrays now ([read_at, duration_at, age_at, answer]): a version reading {result, read_at} takes one for a miss, and this one takes theirs for a miss.
  const via = req.proxy !== "auto" || req.location ? [[req.proxy, req.location ?? null]] : [];
  return `scrape2:${JSON.stringify([req.url, [...req.formats].sort(), req.only_main_content, req.max_tokens ?? null, req.render, req.wait_for ?? null, ...(json ? [json] : []), ...via])}`;
}

/**
 * The entry for a result: the answer a hit sends, and where its two numbers stand in its JSON.
 * The text is built here key by key as JSON.stringify writes a plain object, and kept only if it
 * is exactly JSON.stringify's: otherwise the slots are -1 and hits go through the parsed answer.
 */
function cacheEntry(result: ScrapeResult, readAt: number): CachedRead {
  const answer: ScrapeResult = { ...result, meta: { ...result.meta, cached: true, cache_age_ms: 0, duration_ms: 0 } };
  let text = "{";
  let durationAt = -1;
  let ageAt = -1;
  for (const k of Object.keys(answer)) {
    const v = (answer as unknown as Record<string, unknown>)[k];
    const json = k === "meta" ? null : JSON.stringify(v);
    if (json === undefined) continue;
    text += `${text.length > 1 ? "," : ""}${JSON.stringify(k)}:`;
    if (json !== null) {
      text += json;
      continue;
    }
    const meta = v as Record<string, unknown>;
    let first = true;
    text += "{";
    for (const m of Object.keys(meta)) {
      const mj = JSON.stringify(meta[m]);
      if (mj === undefined) continue;
      text += `${first ? "" : ","}${JSON.stringify(m)}:`;
      first = false;
      if (m === "duration_ms") durationAt = text.length;
      else if (m === "cache_age_ms") ageAt = text.length;
      text += mj;
    }
    text += "}";
  }
  text += "}";
  const placed = durationAt > 0 && ageAt > 0 && text === JSON.stringify(answer);
  return [readAt, placed ? durationAt : -1, placed ? ageAt : -1, answer];
}

/** A cached entry's answer as this hit sends it (the object path: `get`, or a text whose numbers have no place). */
function hitAnswer(answer: ScrapeResult, age: number, durationMs: number): ScrapeResult {
  return { ...answer, meta: { ...answer.meta, cached: true, cache_age_ms: age, duration_ms: durationMs } };
}

/** How old a read is, if this request may have it: any within the cache's 15 minutes without `max_age_ms`, one no older than it with it. */
function usableAge(ports: Ports, readAt: unknown, maxAge: number | undefined): number | null {
  if (typeof readAt !== "number" || !Number.isFinite(readAt)) return null;
  const age = Math.max(0, ports.clock.now() - readAt);
  return maxAge === undefined || age <= maxAge ? age : null;
}

/** `n` as JSON writes it. */
const jsonNumber = (n: number): string => (Number.isFinite(n) ? String(n) : "null");

/**
 * A hit from the entry's JSON text: the answer's text with this hit's `duration_ms` and
 * `cache_age_ms` written in; the parsed answer when the text has no places for them; null for a
 * read too old (or an entry of no known shape).
 */
function hitFromText(ports: Ports, json: string, maxAge: number | undefined, t0: number): string | ScrapeResult | null {
  // "[read_at,duration_at,age_at,{…}]": the three numbers hold no comma.
  const c1 = json.indexOf(",");
  const c2 = json.indexOf(",", c1 + 1);
  const c3 = json.indexOf(",", c2 + 1);
  if (json.charCodeAt(0) !== 91 || c1 < 0 || c2 < 0 || c3 < 0) return null;
  const age = usableAge(ports, Number(json.slice(1, c1)), maxAge);
  if (age === null) return null;
  const start = c3 + 1;
  const end = json.length - 1;
  const d = start + Number(json.slice(c1 + 1, c2));
  const a = start + Number(json.slice(c2 + 1, c3));
  const duration = Math.round(performance.now() - t0);
  // Each place holds the 0 that follows its own key (a check that costs two comparisons).
  if (d > start && a > start && d < end && a < end && json.charCodeAt(d) === 48 && json.charCodeAt(a) === 48
    && json.startsWith('"duration_ms":', d - 14) && json.startsWith('"cache_age_ms":', a - 15)) {
    return d < a
      ? json.slice(start, d) + jsonNumber(duration) + json.slice(d + 1, a) + jsonNumber(age) + json.slice(a + 1, end)
      : json.slice(start, a) + jsonNumber(age) + json.slice(a + 1, d) + jsonNumber(duration) + json.slice(d + 1, end);
  }
  const entry = JSON.parse(json) as CachedRead;
  return entry[3] && typeof entry[3] === "object" ? hitAnswer(entry[3], age, duration) : null;
}

/**
 * A cached read this request may have (see `usableAge`; none with `max_age_ms` 0, when the page is
 * read afresh and cached for the next), as the answer a hit sends: its JSON text when `asText`
 * and the cache hands out text, else the answer.
 */
async function cachedRead(ports: Ports, key: string, maxAge: number | undefined, t0: number, asText: boolean): Promise<string | ScrapeResult | null> {
  if (maxAge === 0) return null;
  if (asText && ports.cache.getJson) {
    const json = await ports.cache.getJson(key);
    return json === null ? null : hitFromText(ports, json, maxAge, t0);
  }
  const hit = await ports.cache.get<CachedRead>(key);
  if (!Array.isArray(hit) || !hit[3] || typeof hit[3] !== "object") return null;
  const age = usableAge(ports, hit[0], maxAge);
  return age === null ? null : hitAnswer(hit[3], age, Math.round(performance.now() - t0));
}

/**
 * A target that answers, even with 404 or 500, has answered: its status (`meta.status_code`)
 * and its page are the result, as a browser would show them. Only a target that cannot be
 * reached is a 502. Error pages, screenshots and pages put through actions are not cached.
 */
export async function scrape(ports: Ports, req: ScrapeRequest, account?: string, model: ScrapeModel | null = null, caps: IndexCaps | null = null): Promise<ScrapeResult> {
  return (await answer(ports, req, account, model, caps, false)) as ScrapeResult;
}

/**
 * `scrape`'s answer as the JSON text the native route sends: the same bytes as
 * `JSON.stringify(await scrape(…))`, but a cached read is sent from the cache's text unparsed.
 */
export async function scrapeJson(ports: Ports, req: ScrapeRequest, account?: string, model: ScrapeModel | null = null, caps: IndexCaps | null = null): Promise<string> {
  const out = await answer(ports, req, account, model, caps, true);
  return typeof out === "string" ? out : JSON.stringify(out);
}

async function answer(ports: Ports, req: ScrapeRequest, account: string | undefined, model: ScrapeModel | null, caps: IndexCaps | null, asText: boolean): Promise<ScrapeResult | string> {
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
  const cached = cacheable && !req.collection ? await cachedRead(ports, key, req.max_age_ms, t0, asText) : null;
  if (cached !== null) return cached;

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
  if (answered && cacheable) await ports.cache.set(key, cacheEntry(indexed ? { ...result, meta: withoutCollection(result.meta) } : result, readAt), CACHE_TTL_SECONDS).catch(() => {});
  return result;
}

function withoutCollection(meta: ScrapeResult["meta"]): ScrapeResult["meta"] {
  const { collection: _, ...rest } = meta;
  return rest;
}
