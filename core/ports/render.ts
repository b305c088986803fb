/** The browser port (api.md §10): what scrape, crawl and batch ask of a browser, and what it answers. */

/** One step a page is put through before it is read (api.md §10). */
export interface RenderAction {
  type: "wait" | "click" | "scroll" | "write" | "press";
  selector?: string;
  text?: string;
  key?: string;
  ms?: number;
  direction?: "up" | "down";
  amount?: number;
}

export interface RenderRequest {
  url: string;
  /** The whole render: launch wait, load, actions and screenshot. */
  timeoutMs: number;
  /** A CSS selector to wait for, or milliseconds to wait. */
  waitFor?: string | number;
  actions?: RenderAction[];
  screenshot?: boolean;
  /**
   * Ends the render early (a crawl or batch job cancelled): the page and its context are closed
   * at once and the render rejects with the signal's reason.
   */
  signal?: AbortSignal;
  /** Whose render this is: the browser's page slots are shared fairly between accounts. */
  account?: string;
  /** Through the operator's proxies (api.md §12), in a context of its own; a browser without them throws `upstream_error`. */
  proxy?: { pool?: string; country?: string };
  /** Extra request headers (Accept-Language for `location`). */
  headers?: Record<string, string>;
}

export interface RenderedPage {
  finalUrl: string;
  status: number;
  html: string;
  /** The main document's Content-Type as the server sent it, when known. */
  contentType?: string | null;
  /** PNG of the viewport, when asked for. */
  screenshot?: Uint8Array;
  /** The main document's response headers, when known (a bot wall may say so only there). */
  headers?: Record<string, string>;
  /** The proxy it came through, as shown (never credentials). */
  via?: string;
}

export interface RenderHealth {
  /** Whether the browser can go through the operator's proxies (api.md §12). */
  proxies?: boolean;
  status: "ok" | "unavailable" | "disabled";
  pages_in_use: number;
  max_pages: number;
  error?: string;
}

/**
 * Renders pages in a real browser (adapters/browser/). Every request the browser makes passes
 * the same egress policy as `PagePort`. Throws `browser_unavailable` (503) when no browser can
 * run, `action_failed` (422) naming the failing action's index, and the page-fetch errors.
 */
export interface RenderPort {
  render(req: RenderRequest): Promise<RenderedPage>;
  health(): RenderHealth;
  /** For /metrics: sockets the browser's egress holds open, the browser's own and those to hosts. */
  egressSockets?(): { client: number; upstream: number };
}
