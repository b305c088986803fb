/**
 * The web dashboard (spec: Authentication 2): static files under /dashboard that drive the public
 * API from the browser. It adds no way in: the routes are read-only, need no authentication,
 * set and read no cookies, and the page authenticates every call itself with the key the user
 * pasted (kept only in the tab's sessionStorage) as `Authorization: Bearer`.
 *
 * Mount it after the gateway middleware so its responses carry the gateway headers too:
 *   mountDashboard(app)   // before the app serves its first request
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "../gateway/context.ts";
import { DASHBOARD_JS } from "./script.ts";
import { DASHBOARD_CSS } from "./style.ts";
import { dashboardHtml } from "./page.ts";

export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Sent with every dashboard response, the HTML and its assets alike. */
export const DASHBOARD_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy": DASHBOARD_CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
};

interface Asset {
  body: string;
  type: string;
  /** Content hash, used as the ETag and as the `?v=` cache-buster in the page's links. */
  hash: string;
  /** The gzipped body, made on first use (CompressionStream is asynchronous). */
  gzipped?: Promise<ArrayBuffer | null>;
}

/** FNV-1a, 32 bits: enough to tell two versions of an asset apart, and synchronous. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

function asset(body: string, type: string): Asset {
  return { body, type, hash: fnv1a(body) };
}

const SCRIPT = asset(DASHBOARD_JS, "text/javascript; charset=utf-8");
const STYLE = asset(DASHBOARD_CSS, "text/css; charset=utf-8");
const PAGE = asset(dashboardHtml({ script: `/dashboard/app.js?v=${SCRIPT.hash}`, style: `/dashboard/app.css?v=${STYLE.hash}` }), "text/html; charset=utf-8");

/** Paths the dashboard serves, for tests and documentation. */
export const DASHBOARD_PATHS = ["/dashboard", "/dashboard/", "/dashboard/app.js", "/dashboard/app.css"] as const;

function gzipped(a: Asset): Promise<ArrayBuffer | null> {
  a.gzipped ??= typeof CompressionStream === "undefined"
    ? Promise.resolve(null)
    : new Response(new Blob([a.body]).stream().pipeThrough(new CompressionStream("gzip")))
      .arrayBuffer()
      .catch(() => null);
  return a.gzipped;
}

async function send(c: Context<AppEnv>, a: Asset, cacheControl: string): Promise<Response> {
  const headers: Record<string, string> = {
    ...DASHBOARD_SECURITY_HEADERS,
    "Cache-Control": cacheControl,
    // Weak: the plain and the gzipped bytes are the same resource.
    ETag: `W/"${a.hash}"`,
    Vary: "Accept-Encoding",
  };
  const match = c.req.header("if-none-match");
  if (match && match.split(",").some((t) => t.trim().replace(/^W\//, "") === `"${a.hash}"`)) {
    return c.body(null, 304, headers);
  }
  headers["Content-Type"] = a.type;
  if (/\bgzip\b(?!;\s*q=0(\.0*)?\s*(,|$))/i.test(c.req.header("accept-encoding") ?? "")) {
    const gz = await gzipped(a);
    if (gz) return c.body(gz, 200, { ...headers, "Content-Encoding": "gzip" });
  }
  return c.body(a.body, 200, headers);
}

/** A `?v=` matching the current content may be cached for good; anything else is revalidated. */
function assetCache(c: Context<AppEnv>, a: Asset): string {
  return c.req.query("v") === a.hash ? "public, max-age=31536000, immutable" : "public, max-age=0, must-revalidate";
}

/** The dashboard is read-only: anything but GET/HEAD is refused before any handler runs. */
const readOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method !== "GET" && c.req.method !== "HEAD") {
    throw new ApiError("method_not_allowed", `${c.req.method} is not allowed on ${c.req.path}; the dashboard is read-only (GET, HEAD).`, {
      headers: { Allow: "GET, HEAD" },
    });
  }
  await next();
};

export function mountDashboard(app: Hono<AppEnv>): void {
  app.use("/dashboard", readOnly);
  app.use("/dashboard/*", readOnly);
  // The page is tiny and must pick up new asset hashes at once: always revalidated.
  app.get("/dashboard", (c) => send(c, PAGE, "no-cache"));
  app.get("/dashboard/", (c) => send(c, PAGE, "no-cache"));
  app.get("/dashboard/app.js", (c) => send(c, SCRIPT, assetCache(c, SCRIPT)));
  app.get("/dashboard/app.css", (c) => send(c, STYLE, assetCache(c, STYLE)));
}
