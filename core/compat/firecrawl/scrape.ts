/**
 * Firecrawl scrape options → native `POST /v1/scrape`, and a native answer → Firecrawl's
 * `Document` (v1 and v2 share both). Formats and actions Quarry has are translated; the rest
 * are accepted and named in the document's `warning` and in `quarry.ignored`.
 */
import * as v from "valibot";
import { capped, clampedWords, type Clamped } from "../clamped.ts";
import { changesOptions, changeTracking } from "./change-tracking.ts";
import { badField, MAX_ACTIONS, MAX_TOTAL_WAIT_MS, PageTimeout, V1_SCRAPE_TIMEOUT, WaitFor } from "./checks.ts";

/** Keys that say who sent the request, not what to do: accepted, never "ignored". */
export const CLIENT_FIELDS = ["origin", "integration"];

const FORMAT: Record<string, string> = {
  markdown: "markdown", html: "html", rawHtml: "raw_html", links: "links", screenshot: "screenshot", "screenshot@fullPage": "screenshot",
  summary: "summary", json: "json", changeTracking: "changes",
};
/** Formats a model writes: scrape's own, not a crawl's or a batch's pages. */
const MODEL_FORMATS = new Set(["summary", "json"]);

export const ScrapeOptions = v.looseObject({
  formats: v.optional(v.nullable(v.array(v.union([v.string(), v.looseObject({ type: v.string() })]), "formats must be an array"))),
  onlyMainContent: v.optional(v.nullable(v.boolean("onlyMainContent must be a boolean"))),
  timeout: PageTimeout,
  waitFor: WaitFor,
  actions: v.optional(v.nullable(v.pipe(
    v.array(v.looseObject({ type: v.string("each action needs a type") }), "actions must be an array"),
    v.maxLength(MAX_ACTIONS, `actions takes at most ${MAX_ACTIONS} steps`),
  ))),
  maxAge: v.optional(v.nullable(v.pipe(v.number("maxAge must be a number"), v.minValue(0, "maxAge must not be negative")))),
  changeTrackingOptions: v.optional(v.nullable(v.looseObject({}, "changeTrackingOptions must be an object"))),
  jsonOptions: v.optional(v.nullable(v.looseObject({ schema: v.optional(v.nullable(v.record(v.string(), v.unknown(), "jsonOptions.schema must be an object"))), prompt: v.optional(v.nullable(v.string("jsonOptions.prompt must be a string"))) }))),
});

/** The longest max_age_ms native takes (30 days); Firecrawl's default, 2 days, is within it. */
const MAX_AGE_MS = 30 * 24 * 3600 * 1000;

/** The json format's schema and prompt: from its object in `formats` (v2), or v1's `jsonOptions`. */
function jsonAsk(opts: FirecrawlScrapeOptions): { schema?: Record<string, unknown>; prompt?: string } {
  const entry = (opts.formats ?? []).find((f): f is { type: string } & Record<string, unknown> => typeof f === "object" && f !== null && f.type === "json");
  const from = (entry ?? opts.jsonOptions ?? {}) as { schema?: unknown; prompt?: unknown };
  const schema = from.schema && typeof from.schema === "object" && !Array.isArray(from.schema) ? (from.schema as Record<string, unknown>) : undefined;
  const prompt = typeof from.prompt === "string" && from.prompt.trim() ? from.prompt.trim().slice(0, 2000) : undefined;
  return { ...(schema ? { schema } : {}), ...(prompt ? { prompt } : {}) };
}
export type FirecrawlScrapeOptions = v.InferOutput<typeof ScrapeOptions>;

export interface ScrapePlan {
  native: Record<string, unknown>;
  /** The Firecrawl formats asked for, by name. */
  formats: string[];
  ignored: string[];
  /** Values Firecrawl takes that Quarry applies at its own bounds. */
  clamped: Clamped[];
}

/** Quarry's bounds for a page (native `timeout_ms`, `wait_for` and a wait action's `ms`). */
const PAGE_MAX_MS = 60_000;
const MAX_WAIT_MS = 30_000;
const MAX_NATIVE_ACTIONS = 20;

/** Milliseconds a wait action waits as Firecrawl counts them: its own, or 1 s for one on a selector. */
const waitOf = (a: Record<string, unknown>) => (a.type !== "wait" ? 0 : typeof a.milliseconds === "number" ? a.milliseconds : typeof a.selector === "string" ? 1000 : 0);

function action(a: Record<string, unknown>, i: number, clamped: Clamped[]): Record<string, unknown> | null {
  switch (a.type) {
    case "wait": {
      if (typeof a.selector === "string") return { type: "wait", selector: a.selector };
      const ms = Math.max(0, Math.round(Number(a.milliseconds ?? 1000) || 0));
      return { type: "wait", ms: capped(clamped, `actions.${i}.milliseconds`, ms, MAX_WAIT_MS, `Quarry waits at most ${MAX_WAIT_MS} ms in one step`) };
    }
    case "click":
      return typeof a.selector === "string" ? { type: "click", selector: a.selector } : null;
    case "write":
      return typeof a.text === "string" ? { type: "write", text: a.text } : null;
    case "press":
      return typeof a.key === "string" ? { type: "press", key: a.key } : null;
    case "scroll":
      return { type: "scroll", direction: a.direction === "up" ? "up" : "down" };
    default:
      return null;
  }
}

/**
 * `known` are the option names the caller's schema declares beside the scrape options (url,
 * origin, …); `prefix` is where the options sit in the caller's body (`scrapeOptions.` for a
 * crawl). Without a browser on this server, what only a browser does (waitFor, actions, a
 * screenshot) is named as not applied rather than refused: the page is still read.
 */
export function toNativeScrape(url: string, opts: FirecrawlScrapeOptions, known: string[], canRender: boolean, prefix = "", v1Scrape = false, job = false): ScrapePlan {
  refuseAsFirecrawl(opts, prefix, v1Scrape);
  const ignored = new Set<string>();
  const clamped: Clamped[] = [];
  const asked = (opts.formats ?? ["markdown"]).map((f) => (typeof f === "string" ? f : f.type));
  const formats = asked.filter((f) => FORMAT[f] && (canRender || FORMAT[f] !== "screenshot") && !(job && MODEL_FORMATS.has(f)));
  if (!canRender && asked.some((f) => FORMAT[f] === "screenshot")) ignored.add("formats.screenshot (no browser on this server)");
  for (const f of asked) if (!FORMAT[f]) ignored.add(`formats.${f}`);
  for (const f of asked) if (job && MODEL_FORMATS.has(f)) ignored.add(`formats.${f} (Quarry makes it for a scrape, not for a crawl's or batch's pages)`);
  const native: Record<string, unknown> = { url, formats: [...new Set(formats.map((f) => FORMAT[f]!))] };
  if ((native.formats as string[]).includes("json")) {
    const ask = jsonAsk(opts);
    if (!ask.schema && !ask.prompt) throw badField(`${prefix}formats`, "the json format needs a schema, a prompt, or both ({type: \"json\", schema, prompt}, or v1's jsonOptions)");
    native.json_options = ask;
  }
  // changeTracking: Quarry's changes, compared with a fresh read whatever maxAge says (native ignores the cache for it).
  if ((native.formats as string[]).includes("changes")) native.changes_options = changesOptions(opts, ignored);
  else if (opts.changeTrackingOptions) ignored.add("changeTrackingOptions (without the changeTracking format)");
  if (typeof opts.maxAge === "number") {
    if (job) ignored.add("maxAge (a crawl or batch reads every page afresh)");
    else native.max_age_ms = capped(clamped, "maxAge", Math.floor(opts.maxAge), MAX_AGE_MS, `Quarry serves a cached read at most ${MAX_AGE_MS} ms old`);
  }
  if ((native.formats as string[]).length === 0) native.formats = ["markdown"];
  if (typeof opts.onlyMainContent === "boolean") native.only_main_content = opts.onlyMainContent;
  if (typeof opts.timeout === "number") {
    native.timeout_ms = capped(clamped, "timeout", opts.timeout, PAGE_MAX_MS, `Quarry gives a page at most ${PAGE_MAX_MS} ms`);
  }
  if (typeof opts.waitFor === "number" && opts.waitFor > 0) {
    if (canRender) native.wait_for = capped(clamped, "waitFor", opts.waitFor, MAX_WAIT_MS, `Quarry waits at most ${MAX_WAIT_MS} ms for a page`);
    else ignored.add("waitFor (no browser on this server)");
  }
  // Without a timeout the page keeps the native default (15 s) after the wait. With one, Firecrawl's
  // own rule (waitFor at most half of it, checked above) leaves room for the wait within Quarry's bounds.
  if (typeof native.wait_for === "number" && native.timeout_ms === undefined) native.timeout_ms = Math.min(PAGE_MAX_MS, native.wait_for + 15_000);
  if (opts.actions?.length && !canRender) ignored.add("actions (no browser on this server)");
  else if (opts.actions?.length) {
    const mapped = opts.actions.map((a, i) => action(a as Record<string, unknown>, i, clamped));
    opts.actions.forEach((a, i) => mapped[i] === null && ignored.add(`actions.${a.type}`));
    const kept = mapped.filter((a): a is Record<string, unknown> => a !== null);
    capped(clamped, "actions", kept.length, MAX_NATIVE_ACTIONS, `Quarry runs at most ${MAX_NATIVE_ACTIONS} actions a page; the first ${MAX_NATIVE_ACTIONS} ran`);
    if (kept.length) native.actions = kept.slice(0, MAX_NATIVE_ACTIONS);
  }
  proxyOptions(opts, native, ignored);
  // storeInCache: false is honoured as far as it matters to the caller (each read is the caller's own); true is the default.
  const honoured = new Set([...known, ...CLIENT_FIELDS, "formats", "onlyMainContent", "timeout", "waitFor", "actions", "maxAge", "jsonOptions", "storeInCache", "proxy", "location", "changeTrackingOptions"]);
  for (const [k, val] of Object.entries(opts)) {
    if (!honoured.has(k) && val !== undefined && val !== null && val !== false && !(Array.isArray(val) && val.length === 0)) ignored.add(k);
  }
  return { native, formats: asked, ignored: [...ignored].sort(), clamped: clamped.map((c) => ({ ...c, option: prefix + c.option })) };
}

/**
 * Firecrawl's `proxy` and `location` (api.md §12): `basic` is a read from this server's own address
 * (native "none"); `auto`, and `enhanced` (v2) or `stealth` (v1), are native "auto", which goes
 * through the operator's proxies when a site blocks (Quarry has no proxy of its own to call
 * enhanced). `location.country` and `location.languages` are native's.
 */
function proxyOptions(opts: FirecrawlScrapeOptions, native: Record<string, unknown>, ignored: Set<string>): void {
  const { proxy, location } = opts as { proxy?: unknown; location?: unknown };
  if (proxy === "basic") native.proxy = "none";
  else if (proxy === "auto" || proxy === "enhanced" || proxy === "stealth") native.proxy = "auto";
  else if (proxy !== undefined && proxy !== null) ignored.add(`proxy (${String(proxy).slice(0, 20)})`);
  if (location && typeof location === "object" && !Array.isArray(location)) {
    const { country, languages } = location as { country?: unknown; languages?: unknown };
    const mapped: Record<string, unknown> = {};
    if (typeof country === "string") mapped.country = country;
    if (Array.isArray(languages) && languages.length) mapped.languages = languages;
    if (Object.keys(mapped).length) native.location = mapped;
  }
}

/**
 * Firecrawl's checks across fields: waitFor at most half of timeout (on v1's scrape, of its default
 * 30000 ms when none is given); at most 60 s of waiting in all.
 */
function refuseAsFirecrawl(opts: FirecrawlScrapeOptions, prefix: string, v1Scrape: boolean): void {
  const timeout = opts.timeout ?? (v1Scrape ? V1_SCRAPE_TIMEOUT : undefined);
  if (opts.waitFor && timeout && opts.waitFor > timeout / 2) {
    const which = opts.timeout ? `timeout (${timeout} ms)` : `timeout (Firecrawl v1's default, ${timeout} ms)`;
    throw badField(`${prefix}waitFor`, `waitFor (${opts.waitFor} ms) must not exceed half of ${which}, which also covers loading the page`);
  }
  const total = (opts.waitFor ?? 0) + (opts.actions ?? []).reduce((sum, a) => sum + waitOf(a as Record<string, unknown>), 0);
  if (opts.actions?.length && total > MAX_TOTAL_WAIT_MS) {
    throw badField(`${prefix}actions`, `waitFor and the wait actions add up to ${total} ms; Firecrawl takes at most ${MAX_TOTAL_WAIT_MS} ms of waiting in all`);
  }
}

interface NativeScrape {
  meta: { url: string; final_url: string; status_code: number; content_type: string | null; cached?: boolean; cache_age_ms?: number | null };
  data: {
    title: string | null; description: string | null; author: string | null; published_at: string | null;
    language: string | null; site_name: string | null; markdown?: string; html?: string; raw_html?: string;
    links?: Array<{ text: string; url: string }>; screenshot?: string; summary?: string; json?: unknown;
    structured_data?: { json_ld: unknown[]; microdata: unknown[]; open_graph: Record<string, string> };
    changes?: Parameters<typeof changeTracking>[0];
  };
}

/** `og:site_name` → `ogSiteName`, as Firecrawl's metadata names Open Graph properties. */
const ogKey = (property: string) => property.split(/[:_]/).map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join("");

/** The page's structured data as Firecrawl's metadata carries it: og* keys, and Quarry's jsonLd and microdata beside them. */
function structuredMetadata(sd: NativeScrape["data"]["structured_data"]): Record<string, unknown> {
  if (!sd) return {};
  const og = Object.fromEntries(Object.entries(sd.open_graph).map(([k, v]) => [ogKey(k), v]));
  return { ...og, ...(sd.json_ld.length ? { jsonLd: sd.json_ld } : {}), ...(sd.microdata.length ? { microdata: sd.microdata } : {}) };
}

/** The native answer as Firecrawl's `Document`; `warning` names what was not honoured. */
export function toDocument(plan: ScrapePlan, res: NativeScrape): Record<string, unknown> {
  const d = res.data;
  const doc: Record<string, unknown> = {};
  if (plan.formats.includes("markdown") || !plan.formats.some((f) => FORMAT[f])) doc.markdown = d.markdown ?? "";
  if (plan.formats.includes("html")) doc.html = d.html ?? "";
  if (plan.formats.includes("rawHtml")) doc.rawHtml = d.raw_html ?? "";
  if (plan.formats.includes("links")) doc.links = (d.links ?? []).map((l) => l.url);
  if (d.screenshot && plan.formats.some((f) => f.startsWith("screenshot"))) doc.screenshot = `data:image/png;base64,${d.screenshot}`;
  if (d.summary !== undefined) doc.summary = d.summary;
  if (d.json !== undefined) doc.json = d.json;
  const tracked = plan.formats.includes("changeTracking") ? changeTracking(d.changes) : undefined;
  if (tracked) doc.changeTracking = tracked;
  const cache = res.meta.cached === undefined ? {} : { cacheState: res.meta.cached ? "hit" : "miss", ...(res.meta.cached && typeof res.meta.cache_age_ms === "number" ? { cachedAt: new Date(Date.now() - res.meta.cache_age_ms).toISOString() } : {}) };
  doc.metadata = {
    ...(d.title !== null ? { title: d.title, ogTitle: d.title } : {}),
    ...structuredMetadata(d.structured_data),
    ...(d.description !== null ? { description: d.description } : {}),
    ...(d.language !== null ? { language: d.language } : {}),
    ...(d.site_name !== null ? { ogSiteName: d.site_name } : {}),
    ...(d.author !== null ? { author: d.author } : {}),
    ...(d.published_at !== null ? { publishedTime: d.published_at } : {}),
    sourceURL: res.meta.url,
    url: res.meta.final_url,
    statusCode: res.meta.status_code,
    ...(res.meta.content_type ? { contentType: res.meta.content_type } : {}),
    ...cache,
  };
  const warning = firecrawlWarning(plan.ignored, plan.clamped);
  if (warning) doc.warning = warning;
  return doc;
}

export const ignoredWarning = (ignored: string[]) => `Quarry accepted but did not apply: ${ignored.join(", ")}.`;

/** Firecrawl's `warning`: what was not applied, then what was applied otherwise than asked; undefined when neither. */
export function firecrawlWarning(ignored: string[], clamped: Clamped[]): string | undefined {
  const said = [ignored.length ? ignoredWarning(ignored) : "", clampedWords(clamped)].filter(Boolean).join(" ");
  return said || undefined;
}
