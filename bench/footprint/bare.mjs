// The footprint benchmarks' baseline: a bare Hono app on the runtime's own server (Deno.serve,
// Bun.serve, @hono/node-server on Node), plain JavaScript so Node loads no TypeScript for it.
// GET /health answers {"status":"ok"}; POST /v1/scrape echoes the URL; GET /openapi.json, with
// BARE_DOCUMENT set, sends that file. Listens on $PORT (0 =
// any free port) and prints `READY <url>`.
import { Hono } from "hono";

const app = new Hono();
app.get("/health", (c) => c.json({ status: "ok" }));
app.post("/v1/scrape", async (c) => c.json({ url: (await c.req.json()).url }));
// The gateway benchmark's baseline for a large constant answer: the bytes of a file (BARE_DOCUMENT),
// read once and sent as they are.
const documentPath = globalThis.Deno?.env.get("BARE_DOCUMENT") ?? globalThis.process?.env.BARE_DOCUMENT;
if (documentPath) {
  const { readFileSync } = await import("node:fs");
  const document = readFileSync(documentPath, "utf8");
  app.get("/openapi.json", (c) => c.body(document, 200, { "Content-Type": "application/json" }));
}
const port = Number(globalThis.Deno?.env.get("PORT") ?? globalThis.process?.env.PORT ?? 0);
const ready = (p) => console.log(`READY http://127.0.0.1:${p}`);

if (globalThis.Deno) {
  Deno.serve({ hostname: "127.0.0.1", port, onListen: ({ port: p }) => ready(p) }, app.fetch);
} else if (globalThis.Bun) {
  ready(Bun.serve({ hostname: "127.0.0.1", port, fetch: app.fetch }).port);
} else {
  const { serve } = await import("@hono/node-server");
  const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port });
  server.once("listening", () => ready(server.address().port));
}
