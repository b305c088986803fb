/**
 * When and how scrape renders a page in a browser (api.md §10). `render: "auto"` renders only
 * pages whose static HTML is a script shell (extract/script-shell.ts: a script that can write
 * text, and an empty root, container or placeholder), so ordinary pages stay on the fast path; actions, wait_for and screenshots need the browser
 * whatever the mode.
 */
import { ApiError } from "../errors.ts";
import type { RenderedPage, RenderPort, RenderRequest } from "../ports.ts";

/** What rendering needs from a request (scrape's, or a job page's). */
interface RenderAsk {
  url: string;
  formats: readonly string[];
  wait_for?: string | number;
  actions?: RenderRequest["actions"];
  signal?: AbortSignal;
  account?: string;
}

export const NO_BROWSER =
  "Rendering needs Chromium: install it (Debian: apt-get install chromium-headless-shell, the lightest, or chromium) or point QUARRY_CHROMIUM_PATH at a Chrome or Chromium executable, then restart Quarry.";

export async function renderWith(render: RenderPort | undefined, req: RenderAsk, timeoutMs: number): Promise<RenderedPage> {
  if (!render || render.health().status === "disabled") throw new ApiError("browser_unavailable", NO_BROWSER);
  return render.render({
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
