/**
 * HTML → main content, metadata, text, markdown and links. Pure: runs unchanged on Node, Deno and Bun (Web APIs only).
 */
import { removeNonContent } from "./boilerplate.ts";
import { cleanTree, collectLinks } from "./clean-html.ts";
import { absoluteUrl, parseDocument } from "./dom.ts";
import { selectMainContent } from "./main-content.ts";
import { extractMetadata } from "./metadata.ts";
import { renderMarkdown } from "./to-markdown.ts";
import { renderText } from "./to-text.ts";
import type { ExtractOptions, ExtractResult } from "./types.ts";

export function extractContent(html: string, url: string, options: ExtractOptions = {}): ExtractResult {
  const document = parseDocument(html);
  // Metadata first: JSON-LD lives in <script> elements that content selection removes.
  const meta = extractMetadata(document);
  const baseHref = document.querySelector("base[href]")?.getAttribute("href");
  const baseUrl = (baseHref && absoluteUrl(baseHref, url)) || url;

  let content: Element | null;
  if (options.onlyMainContent === false) {
    content = document.body;
    if (content) removeNonContent(content);
  } else {
    content = selectMainContent(document, meta);
  }

  let htmlOut = "";
  let text = "";
  let markdown = "";
  let links: ExtractResult["links"] = [];
  if (content) {
    cleanTree(content, baseUrl);
    htmlOut = content.innerHTML.trim();
    text = renderText(content);
    markdown = renderMarkdown(content);
    links = collectLinks(content, url);
  }
  return {
    title: meta.title,
    description: meta.description,
    author: meta.author,
    published_at: meta.published_at,
    language: meta.language,
    site_name: meta.site_name,
    html: htmlOut,
    text,
    markdown,
    links,
  };
}
