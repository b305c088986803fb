/**
 * What agents' own tools see from a scrape (issue #31): every link of the page, the raw HTML as
 * fetched, the page's own structured data, office documents read to markdown, `summary` and
 * `json` without a model, and how old a cached read may be (`max_age_ms`, Firecrawl's `maxAge`).
 * Natively and through the Firecrawl-compatible route, in process, against a local page server.
 */
import { readFileSync } from "node:fs";
import { zipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";

const DOCS = new URL("../fixtures/documents/", import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, DOCS));

/** A home page whose links stand in a paragraph of links (boilerplate to the extractor) and in its nav. */
export const HOME = `<!doctype html><html lang="en"><head><title>Guides home</title>
<meta property="og:title" content="The guides"><meta property="og:type" content="website"><meta property="og:image" content="/cover.png">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"WebSite","name":"Guides","url":"/"}</script>
<script>window.analytics = 1;</script></head>
<body><nav><a href="/">Home</a> <a href="/guide/">All guides</a> <a href="/about">About</a></nav>
<main><article><h1>Welcome to the guides</h1>
<p>This site holds guides for people who run the tool on their own machines, from the first install to a cluster of many nodes.</p>
<p><a href="/guide/1">Install</a> · <a href="/guide/3">Scale out</a></p>
<p>Start with the <a href="/guide/2">configuration guide</a> once the install works, since every later guide assumes its settings are in place.</p>
<div itemscope itemtype="https://schema.org/Product"><span itemprop="name">Quarry Pro</span><span itemprop="offers" itemscope itemtype="https://schema.org/Offer"><meta itemprop="price" content="12.00"><span itemprop="priceCurrency">EUR</span></span></div>
</article></main>
<footer><a href="/about">About us</a> <a href="#top">Top</a> <a href="mailto:team@example.org">Mail</a> <a href="https://example.org/elsewhere">Elsewhere</a></footer></body></html>`;

const TYPES = {
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  odt: "application/vnd.oasis.opendocument.text",
  ods: "application/vnd.oasis.opendocument.spreadsheet",
  odp: "application/vnd.oasis.opendocument.presentation",
} as const;
const FILES: Record<keyof typeof TYPES, string> = { docx: "report.docx", odt: "report.odt", xlsx: "inventory.xlsx", ods: "inventory.ods", pptx: "slides.pptx", odp: "slides.odp" };

let site: PageServer;
let t: TestApp;
let key: string;
const scrape = (json: Record<string, unknown>) => t.request("/v1/scrape", { method: "POST", key, json });
const used = async () => (await (await t.request("/v1/usage", { key })).json()).used as number;

beforeAll(async () => {
  site = await startPageServer();
  site.route("/", send("text/html; charset=utf-8", HOME));
  for (const [kind, file] of Object.entries(FILES)) {
    site.route(`/files/${file}`, send(TYPES[kind as keyof typeof TYPES], fixture(file)));
    // The same bytes from a server that names no type: the zip's contents say which it is.
    site.route(`/download/${file}`, send("application/octet-stream", fixture(file)));
  }
  const docx = fixture("report.docx");
  site.route("/broken.docx", send(TYPES.docx, docx.subarray(0, docx.length / 2)));
  site.route("/encrypted.xlsx", send(TYPES.xlsx, Buffer.from("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 an OLE container, as encrypted Office files are", "latin1")));
  // 200 MB of zeros claimed by one sheet: a few hundred KB on the wire.
  const bomb = zipSync({ "xl/workbook.xml": new Uint8Array(200 * 1024 * 1024) }, { level: 9 });
  site.route("/bomb.xlsx", send(TYPES.xlsx, Buffer.from(bomb)));
  const pages = createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) });
  t = await makeApp({ pages });
  key = (await t.key("acme", ["scrape"])).secret;
});
afterAll(async () => {
  await t?.close();
  await site?.close();
});

describe("links: every link of the page", () => {
  it("natively: absolute, once each, in page order, with text, the main content's marked", async () => {
    const body = await (await scrape({ url: `${site.url}/`, formats: ["links"] })).json();
    const u = (p: string) => `${site.url}${p}`;
    expect(body.data.links).toEqual([
      { text: "Home", url: u("/"), main: false },
      { text: "All guides", url: u("/guide/"), main: false },
      { text: "About", url: u("/about"), main: false },
      { text: "Install", url: u("/guide/1"), main: false },
      { text: "Scale out", url: u("/guide/3"), main: false },
      { text: "configuration guide", url: u("/guide/2"), main: true },
      { text: "Elsewhere", url: "https://example.org/elsewhere", main: false },
    ]);
  });

  it("through Firecrawl's v2 scrape: the URLs, the link paragraph's among them", async () => {
    const res = await (await t.request("/compat/firecrawl/v2/scrape", { method: "POST", key, json: { url: `${site.url}/`, formats: ["markdown", "links"] } })).json();
    expect(res.data.links).toEqual(expect.arrayContaining([`${site.url}/guide/1`, `${site.url}/guide/3`, `${site.url}/about`]));
    expect(res.data.links).toHaveLength(7);
  });
});

describe("raw_html: the page as fetched", () => {
  it("natively and as Firecrawl's rawHtml, scripts and navigation kept; max_tokens cuts it as it cuts the other text formats", async () => {
    const body = await (await scrape({ url: `${site.url}/`, formats: ["raw_html", "html"] })).json();
    expect(body.data.raw_html).toBe(HOME);
    expect(body.data.html).not.toContain("<script");
    const cut = await (await scrape({ url: `${site.url}/`, formats: ["raw_html"], max_tokens: 20 })).json();
    expect(cut.data.raw_html.length).toBeLessThan(200);
    expect(HOME.startsWith(cut.data.raw_html)).toBe(true);
    const fc = await (await t.request("/compat/firecrawl/v2/scrape", { method: "POST", key, json: { url: `${site.url}/`, formats: ["rawHtml"] } })).json();
    expect(fc.data.rawHtml).toBe(HOME);
    expect(fc.warning).toBeUndefined();
  });
});

describe("the page's structured data", () => {
  it("JSON-LD, microdata and Open Graph in data.structured_data, and in Firecrawl's metadata", async () => {
    const body = await (await scrape({ url: `${site.url}/` })).json();
    expect(body.data.structured_data).toEqual({
      json_ld: [{ "@context": "https://schema.org", "@type": "WebSite", name: "Guides", url: "/" }],
      microdata: [{
        type: ["https://schema.org/Product"],
        properties: { name: ["Quarry Pro"], offers: [{ type: ["https://schema.org/Offer"], properties: { price: ["12.00"], priceCurrency: ["EUR"] } }] },
      }],
      open_graph: { "og:title": "The guides", "og:type": "website", "og:image": "/cover.png" },
    });
    const fc = await (await t.request("/compat/firecrawl/v2/scrape", { method: "POST", key, json: { url: `${site.url}/`, formats: ["markdown"] } })).json();
    expect(fc.data.metadata).toMatchObject({ ogType: "website", ogImage: "/cover.png", jsonLd: [{ "@type": "WebSite" }], microdata: [{ type: ["https://schema.org/Product"] }] });
  });
});

describe("office documents", () => {
  it.each(["docx", "odt"] as const)("%s: headings, lists, a table and a link, by its content type and by its bytes alone", async (kind) => {
    for (const path of [`/files/${FILES[kind]}`, `/download/${FILES[kind]}`]) {
      const body = await (await scrape({ url: `${site.url}${path}`, formats: ["markdown", "links"] })).json();
      expect(body.meta.status_code, path).toBe(200);
      const md = body.data.markdown as string;
      expect(md).toMatch(/^# Quarry Field Report/m);
      expect(md).toMatch(/^## Findings$/m);
      expect(md).toMatch(/^- Sitemaps listed pages that no link reached\.$/m);
      expect(md).toMatch(/^1\. Read the sitemaps of every site\.$/m);
      expect(md).toContain("| Region | Pages | Errors |");
      expect(md).toContain("| North | 120 | 3 |");
      expect(md).toContain("[trial page](https://example.org/trial)");
      expect(body.data.title).toBe("Quarry Field Report");
      expect(body.data.links).toEqual([{ text: "trial page", url: "https://example.org/trial", main: true }]);
    }
  });

  it.each(["xlsx", "ods"] as const)("%s: each sheet a table under its name", async (kind) => {
    for (const path of [`/files/${FILES[kind]}`, `/download/${FILES[kind]}`]) {
      const md = (await (await scrape({ url: `${site.url}${path}`, formats: ["markdown"] })).json()).data.markdown as string;
      expect(md, path).toContain("## Stock\n\n| Item | Count | Shelf |\n| --- | --- | --- |\n| Blue tack | 42 | A3 |\n| Paper clips | 1500 | B1 |");
      expect(md, path).toContain("## Orders\n\n| Order | Customer |\n| --- | --- |\n| 1001 | Northwind |");
    }
  });

  it.each(["pptx", "odp"] as const)("%s: each slide's title and its points", async (kind) => {
    for (const path of [`/files/${FILES[kind]}`, `/download/${FILES[kind]}`]) {
      const md = (await (await scrape({ url: `${site.url}${path}`, formats: ["markdown"] })).json()).data.markdown as string;
      expect(md, path).toContain("## Crawling with sitemaps\n\n- Sitemaps list pages links miss\n- Robots rules still apply");
      expect(md, path).toMatch(/## Results\n\n(- )?24 pages found instead of 14/);
    }
  });

  it("a damaged, an encrypted and an oversized document: 422 unsupported_content, free", async () => {
    const before = await used();
    for (const [path, why] of [["/broken.docx", /DOCX document could not be read/], ["/encrypted.xlsx", /XLSX document could not be read: it is not a readable zip/], ["/bomb.xlsx", /inflate to more than 64 MB/]] as const) {
      const res = await scrape({ url: `${site.url}${path}` });
      expect(res.status, path).toBe(422);
      const err = (await res.json()).error;
      expect(err.code).toBe("unsupported_content");
      expect(err.message).toMatch(why);
    }
    expect(await used()).toBe(before);
  });
});

describe("summary and json without a model", () => {
  it("summary is extractive: sentences of the page, in its order", async () => {
    const body = await (await scrape({ url: `${site.url}/`, formats: ["summary"] })).json();
    expect(body.meta.summary).toBe("extractive");
    expect(body.data.summary).toContain("This site holds guides for people who run the tool on their own machines");
    expect(body.data.markdown).toBeUndefined();
    const fc = await (await t.request("/compat/firecrawl/v2/scrape", { method: "POST", key, json: { url: `${site.url}/`, formats: ["summary"] } })).json();
    expect(fc.data.summary).toBe(body.data.summary);
    expect(fc.warning).toBeUndefined();
  });

  it("json is a 422 that names QUARRY_LLM_URL, before anything is read or counted; a json without schema or prompt is a 400", async () => {
    const before = await used();
    const hits = site.hits.length;
    const res = await scrape({ url: `${site.url}/`, formats: ["json"], json_options: { schema: { type: "object", properties: { title: { type: "string" } } } } });
    expect(res.status).toBe(422);
    const err = (await res.json()).error;
    expect(err.code).toBe("model_unavailable");
    expect(err.message).toContain("QUARRY_LLM_URL");
    expect(site.hits.length).toBe(hits);
    expect(await used()).toBe(before);
    expect((await scrape({ url: `${site.url}/`, formats: ["json"] })).status).toBe(400);
    expect((await scrape({ url: `${site.url}/`, json_options: { prompt: "the title" } })).status).toBe(400);
    const fc = await t.request("/compat/firecrawl/v2/scrape", { method: "POST", key, json: { url: `${site.url}/`, formats: [{ type: "json", prompt: "the title" }] } });
    expect(fc.status).toBe(422);
    expect((await fc.json()).error).toContain("QUARRY_LLM_URL");
  });
});

describe("max_age_ms: how old a cached read may be", () => {
  it("serves a read no older than asked, says how old, and reads afresh with 0 or when the copy is older", async () => {
    site.route("/fresh", send("text/html", "<html><body><article><h1>Fresh</h1><p>A page to cache, with enough words in it to be read as the main content of this page.</p></article></body></html>"));
    const reads = () => site.hits.filter((h) => h === "/fresh").length;
    const first = await (await scrape({ url: `${site.url}/fresh` })).json();
    expect(first.meta).toMatchObject({ cached: false, cache_age_ms: null });
    await t.clock.advance(5_000);
    const again = await (await scrape({ url: `${site.url}/fresh` })).json();
    expect(again.meta).toMatchObject({ cached: true, cache_age_ms: 5_000 });
    expect((await (await scrape({ url: `${site.url}/fresh`, max_age_ms: 10_000 })).json()).meta).toMatchObject({ cached: true, cache_age_ms: 5_000 });
    expect(reads()).toBe(1);
    const older = await (await scrape({ url: `${site.url}/fresh`, max_age_ms: 4_000 })).json();
    expect(older.meta).toMatchObject({ cached: false, cache_age_ms: null });
    expect(reads()).toBe(2);
    const zero = await (await scrape({ url: `${site.url}/fresh`, max_age_ms: 0 })).json();
    expect(zero.meta.cached).toBe(false);
    expect(reads()).toBe(3);
    // Firecrawl's maxAge, and its metadata's cacheState and cachedAt.
    await t.clock.advance(2_000);
    const fc = await (await t.request("/compat/firecrawl/v2/scrape", { method: "POST", key, json: { url: `${site.url}/fresh`, maxAge: 60_000 } })).json();
    expect(fc.data.metadata.cacheState).toBe("hit");
    expect(typeof fc.data.metadata.cachedAt).toBe("string");
    const live = await (await t.request("/compat/firecrawl/v2/scrape", { method: "POST", key, json: { url: `${site.url}/fresh`, maxAge: 0 } })).json();
    expect(live.data.metadata.cacheState).toBe("miss");
    expect(reads()).toBe(4);
  });
});
