/**
 * POST /v1/scrape (api.md §6): fetch one page through the guarded page port, turn it into
 * clean main content, and cache the answer by URL and options.
 */
import { loadLibraries } from "../../lazy.ts";
import { countTokens, truncateToTokens } from "../../budget/tokens.ts";
import { ApiError } from "../../errors.ts";
import { decodeHtml } from "../../extract/decode-html.ts";
import { extractPage } from "../../extract/run.ts";
import { pdfToText } from "../../extract/pdf-to-text.ts";
import type { PageMetadata } from "../../extract/types.ts";
import type { Ports, RenderedPage } from "../../ports.ts";
import { looksLikeShell, needsBrowser, NO_BROWSER, renderWith, toBase64 } from "./render.ts";
import type { ScrapeRequest } from "./schema.ts";

const CACHE_TTL_SECONDS = 15 * 60;


/** The page's metadata (as the extractor reads it) and the requested formats. */
export interface ScrapeData extends Omit<PageMetadata, "articleBody"> {
  markdown?: string;
  text?: string;
  html?: string;
  links?: Array<{ text: string; url: string }>;
  screenshot?: string;
}

export interface ScrapeResult {
  meta: {
    url: string; final_url: string; status_code: number; content_type: string | null; duration_ms: number; tokens_used: number; cached: boolean;
    rendered: boolean; render_note?: string;
  };
  data: ScrapeData;
}

type Kind = "html" | "pdf" | "text";

function kindOf(contentType: string | null, body: Uint8Array): Kind | null {
  if (body.byteLength === 0) return "text";
  const type = (contentType ?? "").split(";")[0].trim().toLowerCase();
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (type === "application/pdf" || (body[0] === 0x25 && body[1] === 0x50 && body[2] === 0x44 && body[3] === 0x46)) return "pdf";
  if (type === "text/plain" || type === "text/markdown") return "text";
  if (!type) {
    const head = new TextDecoder().decode(body.subarray(0, 512)).trimStart().toLowerCase();
    if (head.startsWith("<!doctype html") || head.startsWith("<html")) return "html";
  }
  return null;
}

function cacheKey(req: ScrapeRequest): string {
  return `scrape:${JSON.stringify([req.url, [...req.formats].sort(), req.only_main_content, req.max_tokens ?? null, req.render, req.wait_for ?? null])}`;
}

/** Turns a fetched body into the response data (all formats; the caller keeps the requested ones). */
async function contentOf(ports: Ports, kind: Kind, body: Uint8Array, contentType: string | null, finalUrl: string, onlyMain: boolean) {
  if (kind === "html") return extractPage(ports, { body, contentType, url: finalUrl, onlyMainContent: onlyMain });
  const text = kind === "pdf" ? await pdfText(body) : { text: decodeHtml(body, contentType), title: null };
  return {
    title: text.title, description: null, author: null, published_at: null, language: null, site_name: null,
    html: "", text: text.text, markdown: text.text, links: [],
  };
}

async function pdfText(body: Uint8Array) {
  try {
    return await pdfToText(body);
  } catch {
    throw new ApiError("unsupported_content", "The PDF could not be read (damaged or encrypted).");
  }
}

/** What was read: the static fetch, or the browser's rendering of the page. */
interface Read {
  finalUrl: string;
  status: number;
  contentType: string | null;
  body: Uint8Array;
  rendered: boolean;
  screenshot?: Uint8Array;
  note?: string;
}

const utf8 = new TextEncoder();

function fromRendering(page: RenderedPage): Read {
  return { finalUrl: page.finalUrl, status: page.status, contentType: "text/html; charset=utf-8", body: utf8.encode(page.html), rendered: true, ...(page.screenshot ? { screenshot: page.screenshot } : {}) };
}

/**
 * A target that answers, even with 404 or 500, has answered: its status (`meta.status_code`)
 * and its page are the result, as a browser would show them. Only a target that cannot be
 * reached is a 502. Error pages, screenshots and pages put through actions are not cached.
 */
export async function scrape(ports: Ports, req: ScrapeRequest): Promise<ScrapeResult> {
  await loadLibraries();
  if (!/^https?:$/i.test(new URL(req.url).protocol)) {
    throw new ApiError("url_not_allowed", "Only http and https URLs can be fetched.");
  }
  const browserOnly = needsBrowser(req);
  if (req.render === "never" && browserOnly) {
    throw new ApiError("invalid_request", "actions, wait_for and the screenshot format need a browser: use render auto or always.");
  }
  const t0 = performance.now();
  const cacheable = !req.actions?.length && !req.formats.includes("screenshot");
  const key = cacheKey(req);
  const cached = cacheable ? await ports.cache.get<ScrapeResult>(key) : null;
  if (cached) return { ...cached, meta: { ...cached.meta, cached: true, duration_ms: Math.round(performance.now() - t0) } };

  const host = new URL(req.url).hostname;
  let read: Read;
  let content;
  try {
    if (browserOnly) {
      read = fromRendering(await renderWith(ports.render, req, req.timeout_ms));
    } else {
      const page = await ports.pages.fetchPage(req.url, { timeoutMs: req.timeout_ms });
      read = { ...page, rendered: false };
    }
  } catch (err) {
    await ports.sources.record(host, { fetched: true, ok: false }).catch(() => {});
    throw err;
  }
  const kind = kindOf(read.contentType, read.body);
  if (!kind) {
    throw new ApiError("unsupported_content", `Content type ${read.contentType ?? "(none)"} is not supported; Quarry reads HTML, PDF and plain text.`);
  }
  content = await contentOf(ports, kind, read.body, read.contentType, read.finalUrl, req.only_main_content);
  if (req.render === "auto" && !read.rendered && kind === "html" && looksLikeShell(decodeHtml(read.body, read.contentType), content.text)) {
    // The static page is a script shell: render it, within what is left of the deadline.
    const left = Math.max(1_000, req.timeout_ms - Math.round(performance.now() - t0));
    if (!ports.render || ports.render.health().status === "disabled") {
      read.note = `The page looks like it needs JavaScript; this is its static HTML. ${NO_BROWSER}`;
    } else {
      try {
        read = fromRendering(await renderWith(ports.render, req, left));
        content = await contentOf(ports, "html", read.body, read.contentType, read.finalUrl, req.only_main_content);
      } catch (err) {
        if (!(err instanceof ApiError) || err.code !== "browser_unavailable") throw err;
        read.note = `The page looks like it needs JavaScript, but the browser is unavailable: this is its static HTML. ${err.message}`;
      }
    }
  }
  const cap = (s: string) => (req.max_tokens ? truncateToTokens(s, req.max_tokens) : s);
  const data: ScrapeData = {
    title: content.title, description: content.description, author: content.author,
    published_at: content.published_at, language: content.language, site_name: content.site_name,
  };
  let tokens = 0;
  for (const f of req.formats) {
    if (f === "links") data.links = content.links;
    else if (f === "screenshot") {
      if (read.screenshot) data.screenshot = toBase64(read.screenshot);
    } else {
      data[f] = cap(content[f]);
      tokens += countTokens(data[f]!);
    }
  }
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

/**
 * A page already fetched, read as scrape reads it: the same extraction and formats, so crawl and
 * batch pages match what POST /v1/scrape answers for the same URL. Null when the content type is
 * one Quarry does not read. Needs `loadLibraries()` first.
 */
export async function pageContent(
  ports: Ports,
  page: { finalUrl: string; contentType: string | null; body: Uint8Array },
  formats: ReadonlyArray<"markdown" | "text" | "html" | "links">,
  onlyMainContent: boolean,
): Promise<ScrapeData | null> {
  const kind = kindOf(page.contentType, page.body);
  if (!kind) return null;
  const content = await contentOf(ports, kind, page.body, page.contentType, page.finalUrl, onlyMainContent);
  const data: ScrapeData = {
    title: content.title, description: content.description, author: content.author,
    published_at: content.published_at, language: content.language, site_name: content.site_name,
  };
  for (const f of formats) {
    if (f === "links") data.links = content.links;
    else data[f] = content[f];
  }
  return data;
}
