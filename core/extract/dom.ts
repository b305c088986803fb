/**
 * Small DOM helpers over linkedom. linkedom is fast but lenient in its own way: markup without a
 * `<body>` (or `<html>`) tag leaves the body empty, so `parseDocument` adds one where the page
 * forgot it, and repairs the other malformations that would hide a page's text (see below).
 */
import { lib } from "../lazy.ts";

const HAS_BODY = /<body[\s>]/i;
const HEAD_END = /<\/head\s*>/i;
const HTML_START = /<html[^>]*>/i;

/** Where the document proper starts: its doctype or `<html>` tag. */
const DOCUMENT_START = /<!doctype\s|<html[\s>]/i;

/** Tags that make `<html>`, `<head>` and `<body>` elements (the parser ends a tag name at space, `/` or `>`). */
const BODY_TAG = /<body[\s/>]/i;
const DOCUMENT_TAG = /<(?:html|head|body)[\s/>]/i;

/** The first of the document's structural tags. */
const FIRST_STRUCTURE = /<(html|head|body)[\s>]/i;

export function parseDocument(html: string): Document {
  let markup = dropServerErrors(dropLeadingOutput(html));
  // `<!DOCTYPE html><head>…` without an `<html>` tag: linkedom makes the head the document element.
  const first = FIRST_STRUCTURE.exec(markup);
  if (first && first[1]!.toLowerCase() !== "html") markup = `${markup.slice(0, first.index)}<html>${markup.slice(first.index)}`;
  if (!HAS_BODY.test(markup)) {
    if (HEAD_END.test(markup)) markup = markup.replace(HEAD_END, (m) => `${m}<body>`);
    else if (HTML_START.test(markup)) markup = markup.replace(HTML_START, (m) => `${m}<body>`);
    else markup = `<!DOCTYPE html><html><head></head><body>${markup}</body></html>`;
  }
  const document = lib("linkedom").parseHTML(markup).document;
  // The body's elements all come from tags after its own, so without such a tag there is nothing
  // to unwrap, and the selector walk over the whole body (2 % of extraction time) is skipped.
  const bodyAt = markup.search(BODY_TAG);
  if (bodyAt < 0 || DOCUMENT_TAG.test(markup.slice(bodyAt + 5))) unwrapNestedDocuments(document);
  return document;
}

/**
 * A CMS that pastes a whole HTML document into a post (`<article><html><body><p>…`) leaves
 * `<html>`, `<head>` and `<body>` elements inside the page's body, where browsers ignore those
 * tags but keep their content; linkedom keeps the elements, which hide the post from the
 * scorer. They are replaced by their children; a nested head's title and metadata join the real head.
 */
const HEAD_TAGS = new Set(["TITLE", "META", "LINK", "BASE"]);

function unwrapNestedDocuments(document: Document): void {
  const body = document.body;
  if (!body) return;
  const nested = body.querySelectorAll("html, head, body");
  for (let i = nested.length - 1; i >= 0; i--) {
    const el = nested[i]!;
    const parent = el.parentNode;
    if (!parent) continue;
    // A head may hold the whole page when its closing tag is missing: its metadata moves to the real head.
    if (el.tagName === "HEAD") {
      for (const t of Array.from(el.children)) if (HEAD_TAGS.has(t.tagName)) (document.head ?? el).appendChild(t);
    }
    while (el.firstChild) parent.insertBefore(el.firstChild, el);
    el.remove();
  }
}

/**
 * Server-side error output (PHP warnings and notices) printed before the doctype makes linkedom
 * take the first stray tag for the document element and leave the real body empty. Markup before
 * the doctype or `<html>` tag is never the page's content, so it is dropped.
 */
function dropLeadingOutput(html: string): string {
  const head = html.slice(0, 4096);
  const at = head.search(DOCUMENT_START);
  if (at <= 0 || !head.slice(0, at).includes("<")) return html;
  // Comments and processing instructions before the doctype are harmless; only tags and text are cut.
  if (/^(?:\s|<!--[\s\S]*?-->|<\?[\s\S]*?\?>|\uFEFF)*$/.test(head.slice(0, at))) return html;
  return html.slice(at);
}

/** PHP's HTML error format: `<b>Warning</b>: message in <b>/path/file.php</b> on line <b>12</b>`. */
const PHP_ERROR = /(?:<br\s*\/?>\s*)?<b>(?:Warning|Notice|Deprecated|Strict Standards|Fatal error|Parse error|Catchable fatal error)<\/b>:[^<]{0,500}(?:<b>[^<]{0,300}<\/b>[^<]{0,100})?on line <b>\d+<\/b>(?:\s*<br\s*\/?>)?/g;

/** Server error messages printed into the page are never its content. */
function dropServerErrors(html: string): string {
  return html.includes("</b> on line <b>") ? html.replace(PHP_ERROR, "") : html;
}

/** Elements that start a new line/paragraph when rendered as text. */
export const BLOCK_TAGS = new Set([
  "ADDRESS", "ARTICLE", "ASIDE", "BLOCKQUOTE", "BODY", "CAPTION", "CENTER", "DD", "DETAILS", "DIALOG",
  "DIV", "DL", "DT", "FIELDSET", "FIGCAPTION", "FIGURE", "FOOTER", "FORM", "H1", "H2", "H3", "H4", "H5",
  "H6", "HEADER", "HGROUP", "HR", "LI", "MAIN", "NAV", "OL", "P", "PRE", "SECTION", "SUMMARY", "TABLE",
  "TBODY", "TD", "TFOOT", "TH", "THEAD", "TR", "UL",
]);

/** Never content: removed before anything else looks at the page. */
export const NON_CONTENT_TAGS = new Set([
  "SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "LINK", "META", "BASE", "OBJECT", "EMBED", "APPLET",
  "CANVAS", "SVG", "IFRAME", "FRAME", "FRAMESET", "PARAM", "SOURCE", "TRACK", "MAP",
]);

/** Child elements as a stable array (safe to remove from while iterating). */
export function childElements(el: Element): Element[] {
  const out: Element[] = [];
  for (let c = el.firstElementChild; c; c = c.nextElementSibling) out.push(c);
  return out;
}

/** Collapsed-whitespace text length, cheaper than building the normalised string. */
export function textLength(el: Element): number {
  const t = el.textContent ?? "";
  let n = 0;
  let space = true;
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    const isSpace = c === 32 || c === 10 || c === 9 || c === 13 || c === 160 || c === 12;
    if (isSpace) {
      if (!space) n++;
      space = true;
    } else {
      n++;
      space = false;
    }
  }
  return n;
}

export function normalizeSpace(s: string): string {
  return s.replace(/[\s\u00a0]+/g, " ").trim();
}

/** Resolves `href` against `base`; null for unparseable URLs. */
export function absoluteUrl(href: string, base: string): string | null {
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return null;
  }
}

/** Non-space characters of text under an element, and how many of them sit inside links. */
export interface TextStats {
  text: number;
  linked: number;
}

/**
 * One bottom-up pass computing TextStats for every element under `root`. With `strip`, it also
 * removes non-content elements and HTML comments on the way, so the counts ignore them.
 */
export function measureTree(root: Element, strip = false): Map<Element, TextStats> {
  const stats = new Map<Element, TextStats>();
  measure(root, stats, false, strip);
  return stats;
}

function measure(el: Element, stats: Map<Element, TextStats>, inLink: boolean, strip: boolean): TextStats {
  const s: TextStats = { text: 0, linked: 0 };
  let child = el.firstChild;
  while (child) {
    const next = child.nextSibling;
    if (child.nodeType === 3) {
      const n = countNonSpace((child as Text).data);
      s.text += n;
      if (inLink) s.linked += n;
    } else if (child.nodeType === 1) {
      const c = child as Element;
      if (strip && NON_CONTENT_TAGS.has(c.tagName.toUpperCase())) c.remove();
      else {
        const cs = measure(c, stats, inLink || c.tagName === "A", strip);
        s.text += cs.text;
        s.linked += cs.linked;
      }
    } else if (strip && child.nodeType === 8) {
      el.removeChild(child);
    }
    child = next;
  }
  stats.set(el, s);
  return s;
}

function countNonSpace(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 32 && c !== 160) n++;
  }
  return n;
}

/**
 * Declarative shadow roots (`<template shadowrootmode="open">`, server-rendered web components, and
 * what a render serializes of a page's open shadow roots) are shown by a browser as the host's
 * content, unlike other templates: their content takes the template's place. The host's light
 * children follow it (slots are not resolved).
 */
export function unwrapShadowRoots(document: Document, html: string): void {
  if (!/<template\b[^>]*\bshadowroot/i.test(html)) return;
  for (const t of Array.from(document.querySelectorAll("template[shadowrootmode], template[shadowroot]"))) t.replaceWith(...Array.from(t.childNodes));
}
