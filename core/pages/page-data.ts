/**
 * What one page read gives as data, made by one function for both of its readers: POST
 * /v1/scrape's `data`, and each page of a crawl or batch job (which is read as scrape reads it).
 *
 * `max_tokens` is scrape's alone: it cuts each text format of its answer. Crawl and batch
 * requests take no `max_tokens` (api.md §9), so a job page keeps its formats whole, as it
 * always has; the job engine reads its pages through `readJobPage`, handed to it in services.ts.
 */
import { truncateToTokens } from "../budget/tokens.ts";
import { decodeHtml } from "../extract/decode-html.ts";
import type { PageMetadata, StructuredData } from "../ports/extract.ts";
import type { Ports } from "../ports.ts";
import { kindOf, readPage, type Content, type Read, type ReadRequest } from "./read-page.ts";
import { toBase64 } from "./render.ts";

/** The page's metadata (as the extractor reads it) and the requested formats. */
export interface PageData extends Omit<PageMetadata, "articleBody" | "structured"> {
  /** A job page's: whether it was rendered, and why not when it looked like it needed it (scrape says so in `meta`). */
  rendered?: boolean;
  render_note?: string;
  /** A job page's: each step taken to read it (api.md §12); scrape says so in `meta`. */
  fetch_path?: string[];
  markdown?: string;
  text?: string;
  html?: string;
  /** The document as fetched (or as the browser rendered it), decoded; an HTML or text page's only. */
  raw_html?: string;
  /** Every link of the page, `main` when it stood in the main content. */
  links?: Array<{ text: string; url: string; main?: boolean }>;
  screenshot?: string;
  /** The page's own JSON-LD, microdata and Open Graph, when it states any. */
  structured_data?: StructuredData;
}

/** The page as fetched or rendered: an HTML or text page's decoded body, else empty (a PDF or office file has no HTML). */
export function rawHtmlOf(read: Read): string {
  const kind = kindOf(read.contentType, read.body);
  return kind === "html" || kind === "text" ? decodeHtml(read.body, read.contentType) : "";
}

export interface PageDataOptions {
  /** Cuts each text format (markdown, text, html) to this many tokens; needs the tokenizer loaded. */
  maxTokens?: number;
  /** Puts `rendered` and `render_note` after the metadata (a job page's data). */
  withRender?: boolean;
}

/** The metadata, then each format asked for, in the order asked. */
export function pageData(read: Read, content: Content, formats: readonly string[], options: PageDataOptions = {}): PageData {
  const { maxTokens } = options;
  const data: PageData = {
    title: content.title, description: content.description, author: content.author,
    published_at: content.published_at, language: content.language, site_name: content.site_name,
    ...(options.withRender ? { rendered: read.rendered, ...(read.note ? { render_note: read.note } : {}) } : {}),
    ...(content.structured_data ? { structured_data: content.structured_data } : {}),
  };
  for (const f of formats) {
    if (f === "links") data.links = content.links;
    else if (f === "raw_html") data.raw_html = maxTokens ? truncateToTokens(rawHtmlOf(read), maxTokens) : rawHtmlOf(read);
    else if (f === "screenshot") {
      if (read.screenshot) data.screenshot = toBase64(read.screenshot);
    } else if (f === "markdown" || f === "text" || f === "html") {
      data[f] = maxTokens ? truncateToTokens(content[f], maxTokens) : content[f];
    }
  }
  return data;
}

/** What one page of a crawl or batch gave: the read (status, final URL, rendered) and its data. */
export interface JobPageRead {
  read: Read;
  /** Null when the content type is one Quarry does not read. */
  data: PageData | null;
  /** With the `changes` format: the whole markdown, to compare with the last read (null when none was read). */
  markdown?: string | null;
}

/**
 * One page of a crawl or batch, read as scrape reads it (readPage: the same fetch, render
 * decision and extraction) and given the same data, so job pages match what POST /v1/scrape
 * answers for the same URL. Needs `loadExtractLibraries()` first (it counts no tokens).
 */
export async function readJobPage(ports: Ports, req: ReadRequest): Promise<JobPageRead> {
  // `changes` compares the page's markdown, asked for the reading if not for the answer.
  const tracking = req.formats.includes("changes");
  const formats = tracking && !req.formats.includes("markdown") ? [...req.formats, "markdown"] : req.formats;
  const { read, content, fetchPath } = await readPage(ports, { ...req, formats });
  return { read, data: content ? { ...pageData(read, content, req.formats, { withRender: true }), fetch_path: fetchPath } : null, ...(tracking ? { markdown: content?.markdown ?? null } : {}) };
}
