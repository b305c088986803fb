/**
 * The Firecrawl MCP server (`firecrawl-mcp`, unchanged, from npm) pointed at Quarry as its
 * documentation allows for a self-hosted Firecrawl (`FIRECRAWL_API_URL`, `FIRECRAWL_API_KEY`),
 * driven over stdio by the official MCP client, against a real Quarry server process and a
 * local site (issue #31): what an agent using it meets for links, raw HTML, a crawl and the
 * site's sitemaps, an office document, the json and summary formats (a scripted model behind
 * QUARRY_LLM_URL), the page's structured data, maxAge, map, search, crawl status, and a bad key.
 */
import { createRequire } from "node:module";
import { createServer, type Server } from "node:http";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "../helpers/page-server.ts";
import { QUESTION, startHarness, type Harness } from "./harness.ts";

const MCP_SERVER = createRequire(import.meta.url).resolve("firecrawl-mcp/dist/index.js");
const DOCX = readFileSync(new URL("../fixtures/documents/report.docx", import.meta.url));

const GUIDES = Array.from({ length: 21 }, (_, i) => `/fc/guide/${i + 1}`);

const HOME = `<!doctype html><html lang="en"><head><title>Guides home</title>
<meta property="og:title" content="The guides"><meta property="og:type" content="website">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"WebSite","name":"Guides"}</script></head>
<body><nav><a href="/fc/">Home</a> <a href="/fc/about">About</a></nav>
<main><article><h1>Welcome to the guides</h1>
<p>This site holds guides for people who run the tool on their own machines, from the first install to a cluster of many nodes.</p>
<p><a href="/fc/guide/1">Install</a> · <a href="/fc/guide/3">Scale out</a></p>
<p>Every guide assumes the one before it, so read them in order and keep the configuration of each step in place.</p>
</article></main></body></html>`;

const guide = (path: string) =>
  `<!doctype html><html><head><title>${path}</title></head><body><nav><a href="/fc/">Home</a> <a href="/fc/about">About</a></nav><main><article><h1>${path}</h1><p>${path} is one of the guides of this site, with enough words to be read as its main content.</p></article></main></body></html>`;

const urlset = (base: string, paths: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths.map((p) => `<url><loc>${base}${p}</loc></url>`).join("")}</urlset>`;

const SCHEMA = { type: "object", properties: { site: { type: "string" }, guides: { type: "integer" } }, required: ["site"] };

let h: Harness;
let model: Server;
let client: Client;
const modelReplies: string[] = [];
const stderr: string[] = [];

/** An MCP client connected to a fresh `firecrawl-mcp` process that calls Quarry with `key`. */
async function firecrawlMcp(key: string): Promise<Client> {
  const c = new Client({ name: "quarry-test", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_SERVER],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", FIRECRAWL_API_URL: `${h.url}/compat/firecrawl`, FIRECRAWL_API_KEY: key },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d) => stderr.push(String(d)));
  await c.connect(transport);
  return c;
}

/** A tool's answer as the agent reads it: the JSON in its text (and whether it is an error). */
async function call(name: string, args: Record<string, unknown>, c = client): Promise<{ isError: boolean; data: any; text: string }> {
  const res = (await c.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
  const text = res.content.map((p) => (p.type === "text" ? p.text : "")).join("");
  let data: unknown = null;
  try {
    data = JSON.parse(text);
  } catch {
    // an error's text, or prose
  }
  return { isError: res.isError === true, data, text };
}

beforeAll(async () => {
  model = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const content = modelReplies.shift() ?? "";
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ choices: [{ message: { role: "assistant", content } }], usage: { total_tokens: 50 } }));
    });
  });
  await new Promise<void>((r) => model.listen(0, "127.0.0.1", () => r()));
  h = await startHarness({ QUARRY_LLM_URL: `http://127.0.0.1:${(model.address() as { port: number }).port}/v1` });
  const base = h.site.url;
  h.site.route("/fc/", send("text/html; charset=utf-8", HOME));
  h.site.route("/fc/about", send("text/html; charset=utf-8", guide("/fc/about")));
  for (const g of GUIDES) h.site.route(g, send("text/html; charset=utf-8", guide(g)));
  h.site.route("/fc/report.docx", send("application/vnd.openxmlformats-officedocument.wordprocessingml.document", DOCX));
  // No robots.txt (404): the crawl reads /sitemap.xml, an index of a plain and a gzipped sitemap listing 22 pages.
  h.site.route("/sitemap.xml", send("application/xml", `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${base}/fc-a.xml</loc></sitemap><sitemap><loc>${base}/fc-b.xml.gz</loc></sitemap></sitemapindex>`));
  h.site.route("/fc-a.xml", send("application/xml", urlset(base, ["/fc/", ...GUIDES.slice(0, 10)])));
  h.site.route("/fc-b.xml.gz", send("application/gzip", gzipSync(urlset(base, GUIDES.slice(10)))));
  client = await firecrawlMcp(h.keys.full);
}, 120_000);
afterAll(async () => {
  await client?.close();
  await h?.close();
  model?.closeAllConnections();
  model?.close();
});

describe("firecrawl-mcp against Quarry", () => {
  it("lists the tools an agent uses for pages and sites", async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["firecrawl_scrape", "firecrawl_map", "firecrawl_search", "firecrawl_crawl", "firecrawl_check_crawl_status"]));
  });

  it("firecrawl_scrape links: every link of the page, the link paragraph's and the nav's", async () => {
    const { isError, data, text } = await call("firecrawl_scrape", { url: `${h.site.url}/fc/`, formats: ["markdown", "links"] });
    expect(isError, text).toBe(false);
    expect(data.links).toEqual([`${h.site.url}/fc/`, `${h.site.url}/fc/about`, `${h.site.url}/fc/guide/1`, `${h.site.url}/fc/guide/3`]);
    expect(data.markdown).toContain("Welcome to the guides");
  });

  it("firecrawl_scrape rawHtml: the page as served", async () => {
    const { data, text } = await call("firecrawl_scrape", { url: `${h.site.url}/fc/`, formats: ["rawHtml"] });
    expect(data.rawHtml, text).toBe(HOME);
    expect(data.warning).toBeUndefined();
  });

  it("firecrawl_scrape metadata: the page's JSON-LD and Open Graph; maxAge 0 reads afresh, a cached read says so", async () => {
    const fresh = (await call("firecrawl_scrape", { url: `${h.site.url}/fc/`, formats: ["markdown"], maxAge: 0 })).data;
    expect(fresh.metadata).toMatchObject({ title: "The guides", ogType: "website", jsonLd: [{ "@type": "WebSite", name: "Guides" }], cacheState: "miss" });
    const cached = (await call("firecrawl_scrape", { url: `${h.site.url}/fc/`, formats: ["markdown"], maxAge: 600_000 })).data;
    expect(cached.metadata.cacheState).toBe("hit");
    expect(Date.parse(cached.metadata.cachedAt)).toBeLessThanOrEqual(Date.now());
  });

  it("firecrawl_scrape of a DOCX: markdown with its headings, lists and table", async () => {
    const { data, text } = await call("firecrawl_scrape", { url: `${h.site.url}/fc/report.docx`, formats: ["markdown"] });
    expect(data.markdown, text).toMatch(/^# Quarry Field Report/m);
    expect(data.markdown).toMatch(/^1\. Read the sitemaps of every site\.$/m);
    expect(data.markdown).toContain("| North | 120 | 3 |");
  });

  it("firecrawl_scrape json (the model fills the schema, checked against it) and summary", async () => {
    modelReplies.push('{"site": "Guides", "guides": 21}');
    const json = await call("firecrawl_scrape", { url: `${h.site.url}/fc/`, formats: ["json"], jsonOptions: { schema: SCHEMA, prompt: "the site and how many guides" }, maxAge: 0 });
    expect(json.data?.json, json.text).toEqual({ site: "Guides", guides: 21 });
    modelReplies.push("A site of guides for running the tool yourself.");
    const summary = await call("firecrawl_scrape", { url: `${h.site.url}/fc/`, formats: ["summary"], maxAge: 0 });
    expect(summary.data?.summary, summary.text).toBe("A site of guides for running the tool yourself.");
  });

  it("firecrawl_crawl reads the sitemap's pages by default; sitemap skip follows links only; firecrawl_check_crawl_status reads the job", async () => {
    const all = await call("firecrawl_crawl", { url: `${h.site.url}/fc/`, limit: 30, maxDiscoveryDepth: 1 });
    expect(all.isError, all.text).toBe(false);
    expect(all.data.status).toBe("completed");
    const urls = all.data.data.map((d: { metadata: { sourceURL: string } }) => new URL(d.metadata.sourceURL).pathname).sort();
    expect(urls).toEqual(["/fc/", "/fc/about", ...GUIDES].sort());
    const links = await call("firecrawl_crawl", { url: `${h.site.url}/fc/`, limit: 30, maxDiscoveryDepth: 1, sitemap: "skip" });
    expect(links.data.data.map((d: { metadata: { sourceURL: string } }) => new URL(d.metadata.sourceURL).pathname).sort()).toEqual(["/fc/", "/fc/about", "/fc/guide/1", "/fc/guide/3"]);
    // The crawl's id, as an agent that started one without waiting would poll it.
    const started = await fetch(`${h.url}/compat/firecrawl/v2/crawl`, { method: "POST", headers: { authorization: `Bearer ${h.keys.full}`, "content-type": "application/json" }, body: JSON.stringify({ url: `${h.site.url}/fc/`, limit: 3, sitemap: "skip" }) });
    const { id } = await started.json();
    const status = await call("firecrawl_check_crawl_status", { id });
    expect(status.isError, status.text).toBe(false);
    expect(["scraping", "completed"]).toContain(status.data.status);
  }, 90_000);

  it("firecrawl_map with sitemap only lists the sitemap's pages", async () => {
    const { data, text } = await call("firecrawl_map", { url: `${h.site.url}/fc/`, sitemap: "only" });
    const urls = (data.links as Array<{ url: string }>).map((l) => new URL(l.url).pathname);
    expect(urls, text).toEqual(expect.arrayContaining(["/fc/", ...GUIDES]));
  });

  it("firecrawl_search answers web results", async () => {
    const { isError, data, text } = await call("firecrawl_search", { query: QUESTION, limit: 3 });
    expect(isError, text).toBe(false);
    expect(data.data.web.length).toBeGreaterThan(0);
  }, 60_000);

  it("a bad key is refused: the tool answers an error", async () => {
    const bad = await firecrawlMcp(`qry_${"0".repeat(64)}`);
    try {
      const res = await call("firecrawl_scrape", { url: `${h.site.url}/fc/` }, bad);
      expect(res.isError).toBe(true);
      expect(res.text).toMatch(/401|key/i);
    } finally {
      await bad.close();
    }
  });
});

describe("firecrawl-mcp tools that call routes Quarry does not have", () => {
  it("answer a tool error at once, saying so, rather than hanging or pretending", async () => {
    for (const [name, args] of [
      ["firecrawl_agent", { prompt: "find the site's name", urls: [`${h.site.url}/fc/`] }],
      ["firecrawl_credit_usage", {}],
    ] as const) {
      const res = await call(name, args);
      expect(res.isError, `${name}: ${res.text}`).toBe(true);
      expect(res.text, name).toMatch(/404|not found|no such|does not/i);
    }
    // firecrawl-mcp itself retired firecrawl_extract, pointing agents at firecrawl_scrape with the json format, which Quarry has.
    const extract = await call("firecrawl_extract", { urls: [`${h.site.url}/fc/`], prompt: "the site's name" });
    expect(extract.text).toContain('formats: ["json"]');
  }, 60_000);
});
