/**
 * Reading one page the way scrape does (api.md §6, §10), shared by POST /v1/scrape and the pages
 * of crawl and batch jobs: the guarded static fetch, or the browser when only a browser can do
 * what was asked; with `render: "auto"`, a static page that is a script shell is rendered within
 * what is left of the deadline, and without a browser the static page is kept with a note.
 */
import { ApiError } from "../errors.ts";
import { FetchTimeout } from "../net/fetch-errors.ts";
import { decodeHtml } from "../extract/decode-html.ts";
import { extractPage } from "../extract/run.ts";
import { pdfToText } from "../extract/pdf-to-text.ts";
import type { DocumentKind, ExtractResult, Rendering } from "../ports/extract.ts";
import { documentKindOf } from "../extract/documents/kinds.ts";
import type { ExtractRequest, Ports, RenderAction } from "../ports.ts";
import { NO_BROWSER, rendered, type Read } from "./render.ts";
import { readEscalating, type Location, type ProxyMode } from "./escalate.ts";

export type Kind = "html" | "pdf" | "text" | DocumentKind;

const DOCUMENT_NAMES: Record<DocumentKind, string> = { docx: "DOCX", xlsx: "XLSX", pptx: "PPTX", odt: "ODT", ods: "ODS", odp: "ODP" };

export function kindOf(contentType: string | null, body: Uint8Array): Kind | null {
  if (body.byteLength === 0) return "text";
  const type = (contentType ?? "").split(";")[0].trim().toLowerCase();
  const document = documentKindOf(contentType, body);
  if (document) return document;
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (type === "application/pdf" || (body[0] === 0x25 && body[1] === 0x50 && body[2] === 0x44 && body[3] === 0x46)) return "pdf";
  if (type === "text/plain" || type === "text/markdown") return "text";
  if (!type) {
    const head = new TextDecoder().decode(body.subarray(0, 512)).trimStart().toLowerCase();
    if (head.startsWith("<!doctype html") || head.startsWith("<html")) return "html";
  }
  return null;
}

/** What to make of an HTML page: the renderings wanted (every one when absent), the script-shell check, when to give up. */
export type ContentAsk = Pick<ExtractRequest, "formats" | "shellCheck" | "signal">;

/** Turns a fetched body into the formats asked for (a PDF or text page gives every one: they cost nothing). */
export async function contentOf(
  ports: Pick<Ports, "extract">, kind: Kind, body: Uint8Array, contentType: string | null, finalUrl: string, onlyMain: boolean, ask: ContentAsk = {},
): Promise<ExtractResult> {
  if (kind === "html") return extractPage(ports, { body, contentType, url: finalUrl, onlyMainContent: onlyMain, ...ask });
  if (kind !== "pdf" && kind !== "text") {
    // An office document: read whole (its converter keeps only its text and structure), in the extraction worker when there is one.
    const { shellCheck: _shell, ...rest } = ask;
    const content = await extractPage(ports, { body, contentType, url: finalUrl, onlyMainContent: false, document: kind, ...rest });
    if (content.unreadable) throw new ApiError("unsupported_content", `The ${DOCUMENT_NAMES[kind]} document could not be read: ${content.unreadable}.`);
    return content;
  }
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

export type Content = ExtractResult;

const RENDERINGS: ReadonlySet<string> = new Set<Rendering>(["html", "text", "markdown", "links"]);

/** The renderings among a request's formats (a screenshot is the browser's, not the extractor's). */
function renderingsOf(formats: readonly string[]): Rendering[] {
  return formats.filter((f): f is Rendering => RENDERINGS.has(f));
}

export type { Read };

/** What to read and how; the render fields are those of core/schema/render-fields.ts. */
export interface ReadRequest {
  url: string;
  formats: readonly string[];
  only_main_content: boolean;
  timeout_ms: number;
  render: "auto" | "always" | "never";
  wait_for?: string | number;
  actions?: RenderAction[];
  /** Ends the fetch or render early (a job cancelled): the browser page is closed at once. */
  signal?: AbortSignal;
  /** The account the page is read for: browser slots are shared fairly between accounts. */
  account?: string;
  /** api.md §12: `none`, `auto` (default) or a pool of QUARRY_PROXIES; and where the read should come from. */
  proxy?: ProxyMode;
  location?: Location;
}

/** A page read: what was read, its kind and content, and how it was got (api.md §12). */
export interface PageRead {
  read: Read;
  kind: Kind | null;
  content: Content | null;
  fetchPath: string[];
  locationNote?: string;
}

/** Asks for what only a browser can do: actions, waiting, a screenshot, or `render: "always"`. */
export function needsBrowser(req: Pick<ReadRequest, "render" | "actions" | "wait_for" | "formats">): boolean {
  return req.render === "always" || !!req.actions?.length || req.wait_for !== undefined || req.formats.includes("screenshot");
}

/**
 * Extraction within the request's deadline (`timeout_ms` bounds the whole request, #28 item 1):
 * past it, a 504 `timeout` saying the page was read but its content not extracted in time, and
 * the extractor is told to stop (a worker busy with it is ended).
 */
async function extractBy<T>(deadline: number, req: ReadRequest, extract: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  const late = new FetchTimeout(req.url, req.timeout_ms, `${req.url} was read, but extracting its content took longer than timeout_ms (${req.timeout_ms} ms).`, false);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      stop.abort(late);
      reject(late);
    }, Math.max(0, deadline - performance.now()));
  });
  expired.catch(() => {});
  try {
    return await Promise.race([extract(stop.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Fetches or renders the page and extracts it, all within `timeout_ms`. `kind` and `content` are
 * null for a content type Quarry does not read (the caller decides whether that is an error).
 * Fetch and render errors are thrown as they come (browser_unavailable when only a browser could answer).
 */
export async function readPage(ports: Ports, req: ReadRequest): Promise<PageRead> {
  const t0 = performance.now();
  const deadline = t0 + req.timeout_ms;
  // Static, rendered or through a proxy, past bot walls (escalate.ts); a wall on every step is `blocked`.
  const first = await readEscalating(ports, req, req.timeout_ms, needsBrowser(req));
  let read: Read = first.read;
  const path = { fetchPath: first.fetchPath, ...(first.locationNote ? { locationNote: first.locationNote } : {}) };
  const kind = kindOf(read.contentType, read.body);
  if (!kind) return { read, kind, content: null, ...path };
  const formats = renderingsOf(req.formats);
  const shellCheck = req.render === "auto" && !read.rendered;
  let content = await extractBy(deadline, req, (signal) => contentOf(ports, kind, read.body, read.contentType, read.finalUrl, req.only_main_content, { formats, shellCheck, signal }));
  if (shellCheck && kind === "html" && content.shell && !read.via) {
    // The static page is a script shell: render it, within what is left of the deadline.
    const left = Math.max(1_000, req.timeout_ms - Math.round(performance.now() - t0));
    if (!ports.render || ports.render.health().status === "disabled") {
      read.note = `The page looks like it needs JavaScript; this is its static HTML. ${NO_BROWSER}`;
    } else {
      try {
        read = await rendered(ports, req, left);
        path.fetchPath.push("render: ok (the static page is a script shell)");
        const page = read;
        content = await extractBy(deadline, req, (signal) => contentOf(ports, "html", page.body, page.contentType, page.finalUrl, req.only_main_content, { formats, signal }));
      } catch (err) {
        if (!(err instanceof ApiError) || err.code !== "browser_unavailable") throw err;
        read.note = `The page looks like it needs JavaScript, but the browser is unavailable: this is its static HTML. ${err.message}`;
      }
    }
  }
  return { read, kind, content, ...path };
}
