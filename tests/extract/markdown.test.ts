/**
 * Markdown for agents on a hand-written page: structure kept (headings, lists, GFM table, fenced
 * code, links), chrome dropped (navigation, cookie banner, share widget, related links, newsletter).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { extractContent } from "../../core/extract/mod.ts";

const html = readFileSync(new URL("../fixtures/extract/markdown-page.html", import.meta.url), "utf8");
const result = extractContent(html, "https://eng.example.com/blog/tiny-index");
const md = result.markdown;

describe("markdown output", () => {
  it("keeps headings, ordered and unordered lists", () => {
    expect(md).toContain("## Steps");
    expect(md).toContain("## What it supports");
    expect(md).toMatch(/^1\. Tokenise every document into terms\.$/m);
    expect(md).toMatch(/^3\. Sort and de-duplicate the posting lists\.$/m);
    expect(md).toMatch(/^- Boolean AND queries over any number of terms$/m);
  });

  it("renders the table as a GFM pipe table, escaping pipes in cells", () => {
    expect(md).toContain("| Corpus | Documents | Build time |\n| --- | --- | --- |\n| News | 10,000 | 1.2 s |");
    expect(md).toContain("| Wiki \\| sample | 50,000 | 6.8 s |");
  });

  it("fences code blocks with their language and keeps indentation", () => {
    expect(md).toContain("```ts\nfunction intersect(a: number[], b: number[]): number[] {\n  const out: number[] = [];");
    expect(md).toContain("while (i < a.length && j < b.length) {");
    expect(md).toMatch(/\n```\n/);
  });

  it("keeps links, made absolute", () => {
    expect(md).toContain("[our code page](https://eng.example.com/code/tiny-index)");
    // `links` is every link of the page (issue #31); the one in the article is marked main.
    expect(result.links.filter((l) => l.main)).toEqual([{ text: "our code page", url: "https://eng.example.com/code/tiny-index", main: true }]);
    expect(result.links.filter((l) => !l.main).map((l) => l.text)).toEqual(expect.arrayContaining(["Home", "Careers"]));
  });

  it("drops navigation, cookie banner, share widget, related links, newsletter and footer", () => {
    for (const chrome of ["Home", "Careers", "Contact us", "cookies", "Accept all", "Share on Twitter", "facebook.com/sharer", "Related articles", "BM25", "Subscribe to our newsletter", "All rights reserved"]) {
      expect(md).not.toContain(chrome);
      expect(result.text).not.toContain(chrome);
    }
  });

  it("gives plain text with blank lines between paragraphs and no markup", () => {
    expect(result.text).toContain("kept sorted.\n\nThe full source is on our code page, and");
    expect(result.text).toContain("Tokenise every document into terms.\nAppend the document id");
    expect(result.text).not.toMatch(/[<>]\w|\]\(|```/);
  });

  it("reads the page metadata", () => {
    expect(result).toMatchObject({
      title: "Building a tiny search index",
      description: "How we built a small inverted index.",
      author: "Ada Example",
      published_at: "2024-03-05T08:30:00.000Z",
      language: "en-GB",
      site_name: "Example Engineering",
    });
  });
});

describe("small inputs", () => {
  it("handles a fragment without html/body tags", () => {
    const r = extractContent("<h1>Note</h1><p>Just one short paragraph of text here.</p>", "https://x.example/");
    expect(r.text).toContain("Just one short paragraph of text here.");
    expect(r.title).toBe("Note");
  });

  it("handles an empty document", () => {
    const r = extractContent("", "https://x.example/");
    expect(r.text).toBe("");
    expect(r.markdown).toBe("");
    expect(r.links).toEqual([]);
  });

  it("reads JSON-LD in @graph and uses articleBody when the markup has no article", () => {
    const ld = {
      "@context": "https://schema.org",
      "@graph": [
        { "@type": "WebSite", name: "Graph Site" },
        {
          "@type": "NewsArticle",
          headline: "Graph &amp; headline",
          datePublished: "2021-06-01T12:00:00",
          author: [{ "@type": "Person", name: "A. Writer" }, { "@type": "Person", name: "B. Writer" }],
          inLanguage: "de",
          articleBody: "First paragraph of a body only given as data, long enough to count as an article body for the fallback.\nSecond paragraph, also only in JSON-LD, so an extractor that reads markup alone would miss it entirely.",
        },
      ],
    };
    const page = `<html><head><script type="application/ld+json">${JSON.stringify(ld)}</script></head><body><div id="app"></div></body></html>`;
    const r = extractContent(page, "https://news.example/a");
    expect(r).toMatchObject({
      title: "Graph & headline",
      author: "A. Writer, B. Writer",
      published_at: "2021-06-01T12:00:00.000Z",
      language: "de",
      site_name: "Graph Site",
    });
    expect(r.text).toContain("First paragraph of a body only given as data");
    expect(r.text).toContain("\n\nSecond paragraph");
  });
});
