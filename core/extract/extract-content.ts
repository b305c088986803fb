/**
 * HTML → main content, metadata, text, markdown and links. Pure (Web APIs and linkedom only), so
 * it runs unchanged on Node, Deno and Bun alike.
 */
import { removeNonContent } from "./boilerplate.ts";
import { cleanTree, collectLinks, documentLinks } from "./clean-html.ts";
import { absoluteUrl, parseDocument, unwrapShadowRoots } from "./dom.ts";
import { selectMainContent } from "./main-content.ts";
import { extractMetadata } from "./metadata.ts";
import { renderMarkdown } from "./to-markdown.ts";
import { renderText } from "./to-text.ts";
import { looksLikeShell } from "./script-shell.ts";
import type { ExtractOptions, ExtractResult, PageMetadata, Rendering } from "../ports/extract.ts";

interface Rendered {
  html: string;
  text: string;
  markdown: string;
  links: ExtractResult["links"];
  shell?: boolean;
}

const EVERY_RENDERING: readonly Rendering[] = ["html", "text", "markdown", "links"];

function renderContent(document: Document, html: string, meta: PageMetadata, url: string, baseUrl: string, options: ExtractOptions): Rendered {
  const wanted = options.formats ?? EVERY_RENDERING;
  // Every link of the page, taken before content selection removes navigation and link lists.
  const all = wanted.includes("links") ? documentLinks(document, baseUrl, url) : [];
  let content: Element | null;
  if (options.onlyMainContent !== false) {
    content = selectMainContent(document, meta);
  } else {
    content = document.body;
    if (content) removeNonContent(content);
  }
  if (!content) return { html: "", text: "", markdown: "", links: all.map((l) => ({ ...l, main: false })), ...(options.shellCheck ? { shell: looksLikeShell(html, () => "") } : {}) };
  // Only what was asked for: a markdown-only crawl page needs neither its HTML nor its text.
  // Attributes and URLs show only in the HTML, markdown and links; the text reads neither.
  if (wanted.some((f) => f !== "text")) cleanTree(content, baseUrl);
  const root = content;
  const htmlOut = wanted.includes("html") ? root.innerHTML.trim() : "";
  const text = wanted.includes("text") ? renderText(root) : null;
  const rendered: Rendered = {
    html: htmlOut,
    text: text ?? "",
    markdown: wanted.includes("markdown") ? renderMarkdown(root) : "",
    links: wanted.includes("links") ? markMain(all, collectLinks(root, url)) : [],
  };
  // The text is made for the check only when the page has scripts at all.
  if (options.shellCheck) rendered.shell = looksLikeShell(html, () => text ?? renderText(root));
  return rendered;
}

/** The page's links, each marked by whether the main content holds it. */
function markMain(all: ExtractResult["links"], main: ExtractResult["links"]): ExtractResult["links"] {
  const inMain = new Set(main.map((l) => l.url));
  const links = all.map((l) => ({ ...l, main: inMain.has(l.url) }));
  // A link the content gained that the page did not show as such (none in practice) still counts.
  const known = new Set(all.map((l) => l.url));
  for (const l of main) if (!known.has(l.url)) links.push({ ...l, main: true });
  return links;
}

/** The body's text with scripts and styles left out, for trees too deep for anything else. */
function flatText(html: string, shellCheck: boolean): Rendered {
  let text = "";
  try {
    const body = parseDocument(html).body;
    for (const el of Array.from(body?.querySelectorAll("script, style, noscript, template") ?? [])) el.remove();
    text = (body?.textContent ?? "")
      .replace(/[ \t\u00a0]+/g, " ")
      .replace(/\s*\n\s*/g, "\n")
      .trim();
  } catch {
    // no text: the page stays empty
  }
  return { html: "", text, markdown: text, links: [], ...(shellCheck ? { shell: looksLikeShell(html, () => text) } : {}) };
}

export function extractContent(html: string, url: string, options: ExtractOptions = {}): ExtractResult {
  const document = parseDocument(html);
  unwrapShadowRoots(document, html);
  // Metadata first: JSON-LD lives in <script> elements that content selection removes.
  const meta = extractMetadata(document);
  const baseHref = document.querySelector("base[href]")?.getAttribute("href");
  const baseUrl = (baseHref && absoluteUrl(baseHref, url)) || url;

  let rendered: Rendered;
  try {
    rendered = renderContent(document, html, meta, url, baseUrl, options);
  } catch {
    // Recursive tree walks (ours, Readability's, turndown's) overflow the stack on pathologically
    // deep markup (thousands of nested elements); the page's flat text is still worth returning.
    rendered = flatText(html, options.shellCheck === true);
  }
  const { html: htmlOut, text, markdown, links, shell } = rendered;
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
    ...(shell === undefined ? {} : { shell }),
    ...(meta.structured ? { structured_data: meta.structured } : {}),
  };
}
