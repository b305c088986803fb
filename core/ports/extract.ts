/** The extraction port (api.md §6) and the shapes it carries: what core/extract makes of an HTML page. */

/** A link of the page, with its URL made absolute. */
export interface ExtractedLink {
  text: string;
  url: string;
  /** Whether it stood in the page's main content (what markdown and text hold); set on a page's `links`. */
  main?: boolean;
}

/** What a page says about itself: each null when it does not say. */
export interface PageFacts {
  title: string | null;
  description: string | null;
  author: string | null;
  /** ISO 8601 (UTC), or null when the page states no publication date. */
  published_at: string | null;
  /** BCP 47 tag as the page declares it (e.g. "en", "pt-BR"), or null. */
  language: string | null;
  site_name: string | null;
}

/** What `extractContent` returns for one HTML page. */
export interface ExtractResult extends PageFacts {
  /** Clean main-content HTML: no scripts, styles, classes or boilerplate; absolute URLs. */
  html: string;
  /** Plain text; paragraphs separated by blank lines. */
  text: string;
  /** Markdown (GFM tables, fenced code) of the same content. */
  markdown: string;
  /** Every link of the page (not only its main content's), in page order, each marked `main` or not. */
  links: ExtractedLink[];
  /** Whether the page looks like a script shell; only when asked (`shellCheck`). */
  shell?: boolean;
  /** The page's own JSON-LD, microdata and Open Graph; absent when it states none. */
  structured_data?: StructuredData;
  /** Set when the document could not be read (a damaged or encrypted file): why, said to the caller. */
  unreadable?: string;
}

/** What a page states about itself in machine-readable form, as it states it. */
export interface StructuredData {
  /** Each `<script type="application/ld+json">` block, parsed. */
  json_ld: unknown[];
  /** Top-level microdata items: `{type: [itemtype…], id?, properties: {name: [value…]}}`, a nested item as a value. */
  microdata: Array<{ type: string[]; id?: string; properties: Record<string, unknown[]> }>;
  /** `og:*` meta properties by their full name. */
  open_graph: Record<string, string>;
}

export interface ExtractOptions {
  /** true (default): the article only; false: the whole body, cleaned of scripts and styles. */
  onlyMainContent?: boolean;
  /** The renderings to make (the others are left empty); every one when absent. */
  formats?: readonly Rendering[];
  shellCheck?: boolean;
}

export interface PageMetadata extends PageFacts {
  /** JSON-LD `articleBody`, kept as a fallback candidate for the main text. */
  articleBody: string | null;
  /** The page's structured data as it states it, or null. */
  structured?: StructuredData | null;
}

/** One fetched HTML page to turn into main content (core/extract's `extractContent`). */
export interface ExtractRequest {
  /** The page's bytes, as fetched; decoded by its charset where it is extracted. */
  body: Uint8Array;
  contentType: string | null;
  /** The final URL, which links are made absolute against. */
  url: string;
  onlyMainContent: boolean;
  /** The renderings wanted (the others come back empty); every one when absent. */
  formats?: readonly Rendering[];
  /** Also say whether the page looks like a script shell (`shell`), for scrape's `render: "auto"`. */
  shellCheck?: boolean;
  /** The request gave up (its deadline): an extractor that can stop the work does (a worker is ended). */
  signal?: AbortSignal;
  /** The body is an office document of this kind, not HTML: it is turned into HTML first, and read whole. */
  document?: DocumentKind;
}

/** The office documents Quarry reads (core/extract/documents/). */
export type DocumentKind = "docx" | "xlsx" | "pptx" | "odt" | "ods" | "odp";

/** The renderings of the content `extractContent` can make. */
export type Rendering = "html" | "text" | "markdown" | "links";

/**
 * HTML → content. The core's default runs `extractContent` in process (core/extract/run.ts); a
 * runtime with threads can run it elsewhere (adapters/extract/: a pool of workers whose heaps
 * are returned when they end), as long as the result is exactly what `extractContent` gives.
 */
export interface ExtractPort {
  extract(req: ExtractRequest): Promise<ExtractResult>;
  /** For /metrics: workers running, busy, and pages waiting for one. */
  stats?(): { workers: number; busy: number; queued: number };
  /**
   * Pages are on their way (a job was accepted): get ready now, so the first page does not wait
   * for the extractor's start (a worker thread takes a while to load its libraries).
   */
  warm?(): void;
}
