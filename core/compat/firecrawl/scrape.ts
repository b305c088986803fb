/**
 * Firecrawl scrape options → native `POST /v1/scrape`, and a native answer → Firecrawl's
 * `Document` (v1 and v2 share both). Formats and actions Quarry has are translated; the rest
 * are accepted and named in the document's `warning` and in `quarry.ignored`.
 */
import * as v from "valibot";
import { ApiError } from "../../errors.ts";

/** Keys that say who sent the request, not what to do: accepted, never "ignored". */
export const CLIENT_FIELDS = ["origin", "integration"];

const FORMAT: Record<string, string> = { markdown: "markdown", html: "html", rawHtml: "html", links: "links", screenshot: "screenshot", "screenshot@fullPage": "screenshot" };

export const ScrapeOptions = v.looseObject({
  formats: v.optional(v.nullable(v.array(v.union([v.string(), v.looseObject({ type: v.string() })]), "formats must be an array"))),
  onlyMainContent: v.optional(v.nullable(v.boolean("onlyMainContent must be a boolean"))),
  timeout: v.optional(v.nullable(v.number("timeout must be milliseconds"))),
  waitFor: v.optional(v.nullable(v.number("waitFor must be milliseconds"))),
  actions: v.optional(v.nullable(v.array(v.looseObject({ type: v.string("each action needs a type") }), "actions must be an array"))),
});
export type FirecrawlScrapeOptions = v.InferOutput<typeof ScrapeOptions>;

export interface ScrapePlan {
  native: Record<string, unknown>;
  /** The Firecrawl formats asked for, by name. */
  formats: string[];
  ignored: string[];
}

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.round(n)));

function action(a: Record<string, unknown>): Record<string, unknown> | null {
  switch (a.type) {
    case "wait":
      return typeof a.selector === "string" ? { type: "wait", selector: a.selector } : { type: "wait", ms: clamp(Number(a.milliseconds ?? 1000) || 0, 0, 30_000) };
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
 * origin, …). Without a browser on this server, what only a browser does (waitFor, actions, a
 * screenshot) is named as not applied rather than refused: the page is still read.
 */
export function toNativeScrape(url: string, opts: FirecrawlScrapeOptions, known: string[], canRender: boolean): ScrapePlan {
  const ignored = new Set<string>();
  const asked = (opts.formats ?? ["markdown"]).map((f) => (typeof f === "string" ? f : f.type));
  const formats = asked.filter((f) => FORMAT[f] && (canRender || FORMAT[f] !== "screenshot"));
  if (!canRender && asked.some((f) => FORMAT[f] === "screenshot")) ignored.add("formats.screenshot (no browser on this server)");
  for (const f of asked) if (!FORMAT[f]) ignored.add(`formats.${f}`);
  if (asked.includes("rawHtml")) ignored.add("formats.rawHtml (Quarry returns the cleaned HTML)");
  const native: Record<string, unknown> = { url, formats: [...new Set(formats.map((f) => FORMAT[f]!))] };
  if ((native.formats as string[]).length === 0) native.formats = ["markdown"];
  if (typeof opts.onlyMainContent === "boolean") native.only_main_content = opts.onlyMainContent;
  if (typeof opts.timeout === "number") native.timeout_ms = clamp(opts.timeout, 1000, 60_000);
  if (typeof opts.waitFor === "number" && opts.waitFor > 0) {
    if (canRender) native.wait_for = clamp(opts.waitFor, 0, 30_000);
    else ignored.add("waitFor (no browser on this server)");
  }
  if (typeof native.wait_for === "number") {
    // Without a timeout the page keeps the native default (15 s) after the wait; with one, the wait must fit in it.
    if (native.timeout_ms === undefined) native.timeout_ms = Math.min(60_000, native.wait_for + 15_000);
    else if (native.wait_for >= (native.timeout_ms as number)) {
      const message = `waitFor (${opts.waitFor} ms) must be shorter than timeout (${opts.timeout} ms), which also covers loading the page`;
      throw new ApiError("invalid_request", `waitFor: ${message}.`, { details: [{ field: "waitFor", message }] });
    }
  }
  if (opts.actions?.length && !canRender) ignored.add("actions (no browser on this server)");
  else if (opts.actions?.length) {
    const mapped = opts.actions.map((a) => action(a as Record<string, unknown>));
    opts.actions.forEach((a, i) => mapped[i] === null && ignored.add(`actions.${a.type}`));
    const kept = mapped.filter((a): a is Record<string, unknown> => a !== null).slice(0, 20);
    if (kept.length) native.actions = kept;
  }
  const honoured = new Set([...known, ...CLIENT_FIELDS, "formats", "onlyMainContent", "timeout", "waitFor", "actions"]);
  for (const [k, val] of Object.entries(opts)) {
    if (!honoured.has(k) && val !== undefined && val !== null && val !== false && !(Array.isArray(val) && val.length === 0)) ignored.add(k);
  }
  return { native, formats: asked, ignored: [...ignored].sort() };
}

interface NativeScrape {
  meta: { url: string; final_url: string; status_code: number; content_type: string | null };
  data: {
    title: string | null; description: string | null; author: string | null; published_at: string | null;
    language: string | null; site_name: string | null; markdown?: string; html?: string;
    links?: Array<{ text: string; url: string }>; screenshot?: string;
  };
}

/** The native answer as Firecrawl's `Document`; `warning` names what was not honoured. */
export function toDocument(plan: ScrapePlan, res: NativeScrape): Record<string, unknown> {
  const d = res.data;
  const doc: Record<string, unknown> = {};
  if (plan.formats.includes("markdown") || !plan.formats.some((f) => FORMAT[f])) doc.markdown = d.markdown ?? "";
  if (plan.formats.includes("html")) doc.html = d.html ?? "";
  if (plan.formats.includes("rawHtml")) doc.rawHtml = d.html ?? "";
  if (plan.formats.includes("links")) doc.links = (d.links ?? []).map((l) => l.url);
  if (d.screenshot && plan.formats.some((f) => f.startsWith("screenshot"))) doc.screenshot = `data:image/png;base64,${d.screenshot}`;
  doc.metadata = {
    ...(d.title !== null ? { title: d.title, ogTitle: d.title } : {}),
    ...(d.description !== null ? { description: d.description } : {}),
    ...(d.language !== null ? { language: d.language } : {}),
    ...(d.site_name !== null ? { ogSiteName: d.site_name } : {}),
    ...(d.author !== null ? { author: d.author } : {}),
    ...(d.published_at !== null ? { publishedTime: d.published_at } : {}),
    sourceURL: res.meta.url,
    url: res.meta.final_url,
    statusCode: res.meta.status_code,
    ...(res.meta.content_type ? { contentType: res.meta.content_type } : {}),
  };
  if (plan.ignored.length) doc.warning = ignoredWarning(plan.ignored);
  return doc;
}

export const ignoredWarning = (ignored: string[]) => `Quarry accepted but did not apply: ${ignored.join(", ")}.`;
