/**
 * HTML → main content, metadata, text, markdown and links. Pure (Web APIs and linkedom only), so
 * it runs unchanged on Node, Deno and Bun alike.
 */
import { removeNonContent } from "./boilerplate.ts";
import { cleanTree, collectLinks } from "./clean-html.ts";
import { absoluteUrl, parseDocument } from "./dom.ts";
import { selectMainContent } from "./main-content.ts";
import { extractMetadata } from "./metadata.ts";
import { renderMarkdown } from "./to-markdown.ts";
import { renderText } from "./to-text.ts";
import type { ExtractFormat, ExtractOptions, ExtractResult, PageMetadata } from "./types.ts";

interface Rendered {
  html: string;
  text: string;
  markdown: string;
  links: ExtractResult["links"];
}

const ALL_FORMATS: readonly ExtractFormat[] = ["html", "text", "markdown", "links"];

function renderContent(document: Document, meta: PageMetadata, url: string, baseUrl: string, mainOnly: boolean, formats: ReadonlySet<ExtractFormat>): Rendered {
  let content: Element | null;
  if (mainOnly) {
    content = selectMainContent(document, meta);
  } else {
    content = document.body;
    if (content) removeNonContent(content);
  }
  if (!content) return { html: "", text: "", markdown: "", links: [] };
  const html = formats.has("html");
  const markdown = formats.has("markdown");
  const links = formats.has("links");
  // Attributes and URLs show only in these; the text reads neither.
  if (html || markdown || links) cleanTree(content, baseUrl);
  return {
    html: html ? content.innerHTML.trim() : "",
    text: renderText(content),
    markdown: markdown ? renderMarkdown(content) : "",
    links: links ? collectLinks(content, url) : [],
  };
}

/** The body's text with scripts and styles left out, for trees too deep for anything else. */
function flatText(html: string): Rendered {
  try {
    const body = parseDocument(html).body;
    for (const el of Array.from(body?.querySelectorAll("script, style, noscript, template") ?? [])) el.remove();
    const text = (body?.textContent ?? "")
      .replace(/[ \t\u00a0]+/g, " ")
      .replace(/\s*\n\s*/g, "\n")
      .trim();
    return { html: "", text, markdown: text, links: [] };
  } catch {
    return { html: "", text: "", markdown: "", links: [] };
  }
}

export function extractContent(html: string, url: string, options: ExtractOptions = {}): ExtractResult {
  const document = parseDocument(html);
  // Metadata first: JSON-LD lives in <script> elements that content selection removes.
  const meta = extractMetadata(document);
  const baseHref = document.querySelector("base[href]")?.getAttribute("href");
  const baseUrl = (baseHref && absoluteUrl(baseHref, url)) || url;

  let rendered: Rendered;
  try {
    rendered = renderContent(document, meta, url, baseUrl, options.onlyMainContent !== false, new Set(options.formats ?? ALL_FORMATS));
  } catch {
    // Recursive tree walks (ours, Readability's, turndown's) overflow the stack on pathologically
    // deep markup (thousands of nested elements); the page's flat text is still worth returning.
    rendered = flatText(html);
  }
  const { html: htmlOut, text, markdown, links } = rendered;
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
