/**
 * Extraction makes only the renderings it is asked for, and the script-shell check (scrape's
 * `render: "auto"`) gives the same verdict whether or not the text was asked for.
 */
import { describe, expect, it } from "vitest";
import { extractContent } from "../../core/extract/mod.ts";

const prose = Array.from({ length: 5 }, (_, i) => `<p>Paragraph ${i + 1} about the <a href="/harbour/${i + 1}">harbour</a>, with enough words and commas to read as real article prose for the scorer.</p>`).join("");
const article = `<!DOCTYPE html><html><head><title>Harbour</title></head><body><nav><a href="/a">A</a></nav><main><article><h1>Harbour</h1>${prose}</article></main></body></html>`;
const shell = `<!DOCTYPE html><html><head><title>App</title><script src="/app.js"></script></head><body><div id="root"></div></body></html>`;
const url = "https://site.example/news/harbour";

describe("renderings", () => {
  it("makes only the formats asked for, each as the full extraction makes it", () => {
    const all = extractContent(article, url);
    const md = extractContent(article, url, { formats: ["markdown"] });
    expect(md).toEqual({ ...all, html: "", text: "", links: [] });
    expect(md.markdown).toContain("Paragraph 5 about the [harbour](https://site.example/harbour/5)");
    const some = extractContent(article, url, { formats: ["html", "links"] });
    expect(some).toEqual({ ...all, text: "", markdown: "" });
    expect(some.links).toContainEqual({ text: "harbour", url: "https://site.example/harbour/5", main: true });
  });

  it("tells a script shell from an article, with or without the text asked for", () => {
    for (const formats of [undefined, ["markdown"] as const, [] as const]) {
      expect(extractContent(shell, url, { formats, shellCheck: true }).shell).toBe(true);
      // An article with scripts: its text (made for the check when not asked for) says it is no shell.
      expect(extractContent(article.replace("</head>", "<script>track()</script></head>"), url, { formats, shellCheck: true }).shell).toBe(false);
      // A short page with scripts but no application root and a few words is a shell too; without scripts it is not.
      const short = (head: string) => `<!DOCTYPE html><html><head>${head}</head><body><p>Loading the page</p></body></html>`;
      expect(extractContent(short("<script>go()</script>"), url, { formats, shellCheck: true }).shell).toBe(true);
      expect(extractContent(short(""), url, { formats, shellCheck: true }).shell).toBe(false);
    }
    expect(extractContent(shell, url).shell).toBeUndefined();
  });

  it("takes neither a microdata <article> of <meta> tags nor unspaced Japanese text for an empty page", () => {
    const check = (html: string) => extractContent(html, url, { formats: ["text"], shellCheck: true }).shell;
    const words = Array.from({ length: 70 }, (_, i) => `word${i}`).join(" ");
    // A short news brief whose <article> only wraps schema.org properties; the text is beside it.
    const brief = `<html><body><article itemscope><meta itemprop="datePublished" content="2019-11-20"></article><div class="body"><p>${words}</p></div><script src="/site.js"></script></body></html>`;
    expect(check(brief)).toBe(false);
    // The same page with the <article> truly empty, waiting for the script, is a shell.
    expect(check(brief.replace(/<meta[^>]*>/, ""))).toBe(true);
    // Japanese prose has no spaces: 400 characters of it are an article, not one "word".
    const ja = "港の渡し船は秋に止まり、漁師たちが自分の船で郵便を運んだ。".repeat(15);
    expect(check(`<html><body><article></article><div><p>${ja}</p></div><script src="/site.js"></script></body></html>`)).toBe(false);
  });
});
