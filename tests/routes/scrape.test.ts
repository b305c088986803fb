/** POST /v1/scrape in process, through the real Node guarded fetcher, against a local page server. */
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import { countTokens } from "../../core/budget/tokens.ts";
import { makeApp, type TestApp } from "../helpers/app.ts";
import { article } from "../helpers/articles.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";

const ARTICLE = "042bb7b5fedab6eac7db576522b89b93904c237d344bcbe14a6a5ab7f7335856";

/** A one-page PDF with one line of text (offsets computed, so the xref table is valid). */
function tinyPdf(text: string): Buffer {
  const objs = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${`BT /F1 12 Tf 10 50 Td (${text}) Tj ET`.length} >>\nstream\nBT /F1 12 Tf 10 50 Td (${text}) Tj ET\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

describe("POST /v1/scrape", () => {
  let site: PageServer;
  let t: TestApp;
  let key: string;
  const scrapeReq = (json: unknown) => t.request("/v1/scrape", { method: "POST", key, json });

  beforeAll(async () => {
    const { html } = article(ARTICLE);
    site = await startPageServer();
    site.route("/article", send("text/html; charset=utf-8", html));
    site.route("/gz", (_req, res) => res.writeHead(200, { "content-type": "text/html", "content-encoding": "gzip" }).end(gzipSync(html)));
    site.route("/doc.pdf", send("application/pdf", tinyPdf("Quarry reads PDF files too")));
    site.route("/image.png", send("image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47])));
    site.route("/plain", send("text/plain; charset=utf-8", "just some plain words"));
    site.route("/slow", (_req, res) => setTimeout(() => res.writeHead(200, { "content-type": "text/html" }).end("<p>late</p>"), 3000));
    site.route("/latin1", send("text/html; charset=windows-1252", Buffer.from("<html><body><article><h1>Caf\xe9 cr\xe8me</h1><p>Un caf\xe9 tr\xe8s bon, servi chaud au comptoir de la gare, chaque matin de la semaine sans exception.</p></article></body></html>", "latin1")));
    site.route("/moved", (_req, res) => res.writeHead(302, { location: "/article" }).end());
    site.route("/to-private", (_req, res) => res.writeHead(302, { location: "http://[::1]:9/secret" }).end());
    // Only this test server's address is allowed; everything else private stays refused.
    const pages = createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) });
    t = await makeApp({ pages });
    key = (await t.key("acme", ["scrape"])).secret;
  });
  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  it("returns the main content of a real article with metadata, tokens and the cache on the second call", async () => {
    const res = await scrapeReq({ url: `${site.url}/article`, formats: ["markdown", "text", "links"] });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.meta).toMatchObject({ url: `${site.url}/article`, final_url: `${site.url}/article`, status_code: 200, cached: false });
    expect(body.meta.content_type).toContain("text/html");
    expect(body.data.text).toContain("Gaming used to be so simple.");
    expect(body.data.markdown).toContain("Gaming used to be so simple.");
    expect(body.data.title).toBeTruthy();
    expect(body.data).not.toHaveProperty("html");
    expect(Array.isArray(body.data.links)).toBe(true);
    expect(body.meta.tokens_used).toBe(countTokens(body.data.markdown) + countTokens(body.data.text));
    const again = await (await scrapeReq({ url: `${site.url}/article`, formats: ["text", "markdown", "links"] })).json();
    expect(again.meta.cached).toBe(true);
    expect(again.data.text).toBe(body.data.text);
    const usage = await (await t.request("/v1/usage", { key })).json();
    expect(usage.endpoints.scrape).toBe(2);
  });

  it("answers and counts a format named twice once", async () => {
    const body = await (await scrapeReq({ url: `${site.url}/plain`, formats: ["markdown", "markdown", "text"] })).json();
    expect(body.meta.tokens_used).toBeGreaterThan(0);
    expect(body.meta.tokens_used).toBe(countTokens(body.data.markdown) + countTokens(body.data.text));
  });

  it("caps each format at max_tokens", async () => {
    const body = await (await scrapeReq({ url: `${site.url}/article`, formats: ["markdown"], max_tokens: 50 })).json();
    expect(countTokens(body.data.markdown)).toBeLessThanOrEqual(50);
    expect(body.meta.tokens_used).toBeLessThanOrEqual(50);
    expect(body.meta.tokens_used).toBeGreaterThan(30);
  });

  it("follows redirects, decompresses, and decodes declared charsets", async () => {
    const moved = await (await scrapeReq({ url: `${site.url}/moved`, formats: ["text"] })).json();
    expect(moved.meta.final_url).toBe(`${site.url}/article`);
    expect((await (await scrapeReq({ url: `${site.url}/gz`, formats: ["text"] })).json()).data.text).toContain("Gaming used to be so simple.");
    expect((await (await scrapeReq({ url: `${site.url}/latin1`, formats: ["text"] })).json()).data.text).toContain("Un café très bon");
  });

  it("reads PDF and plain text; refuses other content with 422", async () => {
    const pdf = await (await scrapeReq({ url: `${site.url}/doc.pdf`, formats: ["text"] })).json();
    expect(pdf.data.text).toContain("Quarry reads PDF files too");
    expect((await (await scrapeReq({ url: `${site.url}/plain`, formats: ["markdown"] })).json()).data.markdown).toBe("just some plain words");
    const img = await scrapeReq({ url: `${site.url}/image.png` });
    expect(img.status).toBe(422);
    expect((await img.json()).error.code).toBe("unsupported_content");
  });

  it("answers a target's 404 as data: 200 with meta.status_code 404 and the page, not cached", async () => {
    const before = (await (await t.request("/v1/usage", { key })).json()).used;
    const res = await scrapeReq({ url: `${site.url}/missing`, formats: ["text"] });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.meta).toMatchObject({ status_code: 404, cached: false });
    expect(typeof body.data.text).toBe("string");
    expect((await (await t.request("/v1/usage", { key })).json()).used).toBe(before + 1);
    expect((await (await scrapeReq({ url: `${site.url}/missing`, formats: ["text"] })).json()).meta.cached).toBe(false);
  });

  it("refuses a private or non-http(s) URL with 422 url_not_allowed and counts it toward nothing", async () => {
    const before = (await (await t.request("/v1/usage", { key })).json()).used;
    for (const url of ["http://127.0.0.2/", "file:///etc/passwd", "ftp://example.org/file"]) {
      const res = await scrapeReq({ url });
      expect(res.status, url).toBe(422);
      expect((await res.json()).error.code).toBe("url_not_allowed");
    }
    expect((await (await t.request("/v1/usage", { key })).json()).used).toBe(before);
  });

  it("answers a page slower than timeout_ms with 504", async () => {
    const res = await scrapeReq({ url: `${site.url}/slow`, timeout_ms: 1000 });
    expect(res.status).toBe(504);
    expect((await res.json()).error.code).toBe("timeout");
  });

  it("refuses private addresses with 422 url_not_allowed, also behind a redirect, and sends them nothing", async () => {
    for (const url of ["http://127.0.0.2/", "http://localhost:9/", "http://[::1]:9/", "http://169.254.169.254/latest/meta-data/", "http://2130706434/", "http://0x7f000002/", `${site.url}/to-private`]) {
      const res = await scrapeReq({ url });
      expect(res.status, url).toBe(422);
      const body = await res.json();
      expect(body.error.code).toBe("url_not_allowed");
      expect(body.error.message.length).toBeGreaterThan(20);
    }
    expect(site.hits.filter((h) => h.includes("secret"))).toEqual([]);
  });

  it.each([
    [{}, "url"],
    [{ url: "not a url" }, "url"],
    [{ url: "https://example.org", formats: ["pdf"] }, "formats.0"],
    [{ url: "https://example.org", formats: [] }, "formats"],
    [{ url: "https://example.org", timeout_ms: 10 }, "timeout_ms"],
    [{ url: "https://example.org", max_tokens: 0 }, "max_tokens"],
    [{ url: "https://example.org", only_main_content: "yes" }, "only_main_content"],
    [{ url: "https://example.org", wait_for: 40_000 }, "wait_for"],
    [{ url: "https://example.org", actions: [{ type: "hover" }] }, "actions.0.type"],
  ])("%o → 400 naming %s", async (json, field) => {
    const res = await scrapeReq(json);
    expect(res.status).toBe(400);
    expect((await res.json()).error.details.map((d: { field: string }) => d.field)).toContain(field);
  });
});
