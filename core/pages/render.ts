/**
 * When and how scrape renders a page in a browser (api.md §10). `render: "auto"` renders only
 * pages whose static HTML is a script shell (extract/script-shell.ts: a script that can write
 * text, and an empty root, container or placeholder), so ordinary pages stay on the fast path; actions, wait_for and screenshots need the browser
 * whatever the mode.
 */
import { ApiError } from "../errors.ts";
import type { Ports, RenderedPage, RenderPort, RenderRequest } from "../ports.ts";

/** What rendering needs from a request (scrape's, or a job page's). */
interface RenderAsk {
  url: string;
  formats: readonly string[];
  wait_for?: string | number;
  actions?: RenderRequest["actions"];
  signal?: AbortSignal;
  account?: string;
}

/** What was read: the static fetch, or the browser's rendering of the page. */
export interface Read {
  finalUrl: string;
  status: number;
  contentType: string | null;
  body: Uint8Array;
  rendered: boolean;
  screenshot?: Uint8Array;
  note?: string;
  /** The response headers, when known (block detection). */
  headers?: Headers;
  /** The proxy it came through, as shown. */
  via?: string;
}

/** How a render goes out: through which proxies, with which extra headers. */
export type RenderVia = Pick<RenderRequest, "proxy" | "headers">;

const utf8 = new TextEncoder();

function fromRendering(page: RenderedPage): Read {
  return {
    finalUrl: page.finalUrl, status: page.status, contentType: "text/html; charset=utf-8", body: utf8.encode(page.html), rendered: true,
    ...(page.screenshot ? { screenshot: page.screenshot } : {}), ...(page.headers ? { headers: new Headers(page.headers) } : {}), ...(page.via ? { via: page.via } : {}),
  };
}

const HTML_TYPE = /^\s*(text\/html|application\/xhtml\+xml)\b/i;

/**
 * Renders the page. A document that is no HTML page (an image, plain text, JSON) gains nothing
 * from the browser, which would hand back its own viewer's markup as if it were the page: it is
 * read as the static fetcher reads it, and the note says so.
 */
export async function rendered(ports: Ports, req: RenderAsk, timeoutMs: number, via: RenderVia = {}): Promise<Read> {
  const t0 = performance.now();
  const page = await renderWith(ports.render, req, timeoutMs, via);
  if (!page.contentType || HTML_TYPE.test(page.contentType)) return fromRendering(page);
  const left = Math.max(1_000, timeoutMs - Math.round(performance.now() - t0));
  const fetched = await ports.pages.fetchPage(req.url, { timeoutMs: left, ...(req.signal ? { signal: req.signal } : {}), ...(via.proxy ? { proxy: via.proxy } : {}), ...(via.headers ? { headers: via.headers } : {}) });
  return { ...fetched, rendered: false, note: `The URL is not an HTML page (${page.contentType.split(";")[0]!.trim()}): it was read without the browser.` };
}

export const NO_BROWSER =
  "Rendering needs Chromium: install it (Debian: apt-get install chromium-headless-shell, the lightest, or chromium) or point QUARRY_CHROMIUM_PATH at a Chrome or Chromium executable, then restart Quarry.";

export async function renderWith(render: RenderPort | undefined, req: RenderAsk, timeoutMs: number, via: RenderVia = {}): Promise<RenderedPage> {
  if (!render || render.health().status === "disabled") throw new ApiError("browser_unavailable", NO_BROWSER);
  return render.render({
    ...via,
    url: req.url,
    timeoutMs,
    ...(req.wait_for !== undefined ? { waitFor: req.wait_for } : {}),
    ...(req.actions?.length ? { actions: req.actions } : {}),
    ...(req.formats.includes("screenshot") ? { screenshot: true } : {}),
    ...(req.signal ? { signal: req.signal } : {}),
    ...(req.account ? { account: req.account } : {}),
  });
}

/** Base64 with Web standards only (no Buffer in core). */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
