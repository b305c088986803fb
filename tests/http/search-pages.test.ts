/**
 * Search at a tier that reads pages, from a real server over HTTP and through the real MCP
 * client: one engine answers (replayed SearXNG linking to local pages), the others fail. A page
 * that cannot be read leaves its excerpt null, and meta.pages says which and why, so a caller
 * can tell "this page had nothing on the query" from "this page could not be read".
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PageServer } from "../helpers/page-server.ts";
import type { Server } from "../helpers/server.ts";
import { startUnreadPagesRig, type UnreadPagesRig } from "../helpers/unread-pages.ts";

const ARTICLE = "<html><head><title>Putty adhesives</title></head><body><article><h1>Putty adhesives</h1><p>Reusable putty adhesive holds posters to walls without damage. The putty adhesive can be pulled off and used again many times.</p><p>Most putty adhesive is blue, though white and yellow kinds are sold too.</p></article></body></html>";

let rig: UnreadPagesRig;
let server: Server;
let site: PageServer;
let key: string;

beforeAll(async () => {
  rig = await startUnreadPagesRig({
    article: ARTICLE,
    query: "putty adhesive",
    titles: ["Putty adhesives", "Putty adhesive shop", "Putty adhesive picture"],
    snippets: ["Reusable putty adhesive", "Buy putty adhesive", "A picture of putty adhesive"],
    scope: "search",
  });
  ({ server, site, key } = rig);
}, 60_000);
afterAll(async () => {
  await rig?.close();
});

type Failed = { url: string; reason: string };

function checkPages(body: { meta: { pages: { read: number; failed: Failed[] } }; results: Array<{ url: string; excerpt: string | null }> }) {
  expect(body.meta.pages.read).toBe(1);
  const failed = Object.fromEntries(body.meta.pages.failed.map((f) => [f.url.replace(site.url, ""), f.reason]));
  expect(failed).toEqual({ "/gone": "the page answered HTTP 503", "/picture": "not an HTML page (image/png)" });
  const byPath = Object.fromEntries(body.results.map((r) => [r.url.replace(site.url, ""), r.excerpt]));
  expect(byPath["/article"]).toMatch(/putty adhesive/i);
  expect(byPath["/gone"]).toBeNull();
  expect(byPath["/picture"]).toBeNull();
}

describe("search: pages that could not be read are named", () => {
  it("tier summary: meta.pages counts the page read and names each one that was not, with why", async () => {
    const res = await fetch(`${server.url}/v1/search`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "putty adhesive", tier: "summary" }),
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    // The engines that failed are named too: the answer is partial.
    expect(body.meta.backends.searxng.status).toBe("ok");
    expect(body.meta.backends.brave).toMatchObject({ status: "error", error: "http: Brave answered HTTP 500" });
    checkPages(body);
  });

  it("tier basic reads no page and has no meta.pages", async () => {
    const res = await fetch(`${server.url}/v1/search`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "putty adhesive basic" }),
    });
    expect((await res.json()).meta.pages).toBeUndefined();
  });

  it("the MCP search tool gives an agent the same account", async () => {
    const client = new Client({ name: "walk", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const result = (await client.callTool({ name: "search", arguments: { query: "putty adhesive mcp", tier: "summary" } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      checkPages(JSON.parse((result.content[0] as { text: string }).text));
    } finally {
      await client.close();
    }
  });
});
