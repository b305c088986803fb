/**
 * GET /docs: the API reference, rendered in the browser by Swagger UI from the live
 * /openapi.json. Everything is served by Quarry itself: the page, a small start-up script, and
 * Swagger UI's prebuilt bundle and stylesheet, which the runtime adapter reads from the
 * `swagger-ui-dist` package (`DocsAssets`); nothing comes from a CDN. The policy allows
 * scripts from this origin only; styles inline too, because Swagger UI sets some itself.
 */
import type { Hono } from "hono";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "../gateway/context.ts";
import type { DocsAssets } from "../ports.ts";

export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; " +
  "font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const HEADERS = {
  "Content-Security-Policy": DOCS_CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Resource-Policy": "same-origin",
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Quarry API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<nav aria-label="Quarry"><p style="margin:0;padding:.6rem 1rem;font:14px system-ui,sans-serif"><a href="/dashboard">Dashboard</a> · <a href="/openapi.json">openapi.json</a></p></nav>
<main id="docs" aria-label="API reference"></main>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/start.js"></script>
</body>
</html>
`;

/** Starts Swagger UI on the live document; "Try it out" sends requests to this same server. */
const START = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#docs",
  deepLinking: true,
  displayOperationId: true,
  defaultModelsExpandDepth: 0,
  tryItOutEnabled: false,
  validatorUrl: null,
});
`;

const TYPES = { "swagger-ui-bundle.js": "text/javascript; charset=utf-8", "swagger-ui.css": "text/css; charset=utf-8" } as const;

export function mountDocs(app: Hono<AppEnv>, assets: DocsAssets | undefined): void {
  const page = (body: BodyInit, type: string, cache = "no-cache") =>
    new Response(body, { headers: { ...HEADERS, "Content-Type": type, "Cache-Control": cache } });
  app.get("/docs", (c) => (c.set("route", "/docs"), page(PAGE, "text/html; charset=utf-8")));
  app.get("/docs/start.js", (c) => (c.set("route", "/docs"), page(START, "text/javascript; charset=utf-8")));
  for (const name of Object.keys(TYPES) as Array<keyof typeof TYPES>) {
    app.get(`/docs/${name}`, async (c) => {
      c.set("route", "/docs");
      const body = await assets?.(name);
      if (!body) throw new ApiError("not_found", `${name} is not available: install the swagger-ui-dist package to serve /docs.`);
      return page(body as Uint8Array<ArrayBuffer>, TYPES[name], "public, max-age=3600");
    });
  }
}
