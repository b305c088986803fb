/** The footprint benchmark's baseline: a bare Hono JSON route on @hono/node-server. Prints `READY <url>`. */
import { serve } from "@hono/node-server";
import { Hono } from "hono";

const app = new Hono();
app.post("/v1/scrape", async (c) => c.json({ url: (await c.req.json()).url }));
const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
server.once("listening", () => console.log(`READY http://127.0.0.1:${(server.address() as { port: number }).port}`));
