/**
 * The lead (standfirst, intro, deck) of an article: the short paragraph right under the headline
 * that many CMSs put in the article's header, outside the container that holds the body text.
 * Boilerplate removal drops headers, and the scorer picks the body, so the lead is found before
 * either runs, by its name and its place (within a few elements after an `<h1>`), and restored
 * at the top of the content when the content does not already hold it. Only leads of two
 * sentences or more: a one-line deck under the headline is a subtitle, left to metadata as the
 * headline is. When no block after the headline is named like a lead, the first paragraph-like
 * block there of lead length is taken: page builders and news themes put the opening paragraph in
 * a header or hero box (as an `<h2>`, or a `<p>` with a styling class) that the scorer leaves out.
 */
import { NON_CONTENT_TAGS, normalizeSpace } from "./dom.ts";
import { isBoilerplateName } from "./boilerplate.ts";

/** Class/id tokens that name a lead paragraph. */
const LEAD_TOKENS = new Set(["lead", "lede", "intro", "introduction", "standfirst", "deck", "dek", "summary", "abstract", "excerpt"]);
/** How many elements after the headline a lead may start. */
const WINDOW = 25;
/** Decks run to about a hundred characters; leads are paragraphs. */
const MIN_CHARS = 150;
const MAX_CHARS = 1000;

function tokens(el: Element): string[] {
  const names = `${el.getAttribute("class") ?? ""} ${el.getAttribute("id") ?? ""}`;
  if (names.length < 3) return [];
  // camelCase parts too ("articleIntro"), then words split on - and _.
  return names.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase().split(/[\s_-]+/);
}

function isLeadName(el: Element): boolean {
  for (const t of tokens(el)) if (LEAD_TOKENS.has(t)) return true;
  return false;
}

/** Text of an element without what scripts and styles hold. */
function visibleText(el: Element): string {
  let out = "";
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === 3) out += (c as Text).data;
    else if (c.nodeType === 1 && !NON_CONTENT_TAGS.has((c as Element).tagName.toUpperCase())) out += ` ${visibleText(c as Element)} `;
  }
  return out;
}

/** Sentence ends followed by more text. */
const SENTENCE_BREAK = /[.!?…]["'“”»«)]?\s+\S/g;

/** The next element in document order after `el`'s subtree when `skip`, else its first child. */
function nextElement(el: Element, skip: boolean): Element | null {
  if (!skip && el.firstElementChild) return el.firstElementChild;
  for (let e: Element | null = el; e; e = e.parentElement) {
    if (e.nextElementSibling) return e.nextElementSibling;
  }
  return null;
}

const NOT_LEAD = new Set(["A", "NAV", "ASIDE", "FOOTER", "BUTTON", "FORM", "SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "FIGURE", "FIGCAPTION"]);

/**
 * The lead's text, or null: within a few elements after the first `<h1>`, the first lead-named
 * block, or when none is there, the first paragraph-like block of lead length.
 */
export function findLead(body: Element, title: string | null = null): string | null {
  const h1 = headline(body, title);
  if (!h1) return null;
  const named = scan(h1, false);
  // A lead-named block that is no lead (a one-line deck) settles it: the page names its parts.
  return named !== undefined ? named : scan(h1, true) ?? null;
}

/**
 * The `<h1>` that says the page's title; the first one when none does. Sites also use `<h1>` for
 * their name, a "Navigation" label or an empty logo box before the headline.
 */
function headline(body: Element, title: string | null): Element | null {
  const first = body.querySelector("h1");
  const wanted = title ? normalizeSpace(title).toLowerCase() : "";
  // Only a first <h1> in the page's chrome, or an empty one, sends the search further (a walk of the whole body).
  if (!first || !wanted || saysTitle(first, wanted) || !inChrome(first)) return first;
  for (const h of Array.from(body.getElementsByTagName("h1"))) if (saysTitle(h, wanted)) return h;
  return first;
}

const CHROME_BOXES = new Set(["HEADER", "NAV", "ASIDE", "FOOTER"]);

/** Empty, or inside a page header, navigation or a box named like chrome (the site's name, a menu label). */
function inChrome(h1: Element): boolean {
  if (!normalizeSpace(h1.textContent ?? "")) return true;
  for (let e: Element | null = h1; e && e.tagName !== "BODY"; e = e.parentElement) {
    if (CHROME_BOXES.has(e.tagName) || e.getAttribute("role") === "banner" || e.getAttribute("role") === "navigation") return true;
    if (isBoilerplateName(`${e.getAttribute("class") ?? ""} ${e.getAttribute("id") ?? ""}`)) return true;
  }
  return false;
}

function saysTitle(h1: Element, title: string): boolean {
  const text = normalizeSpace(h1.textContent ?? "").toLowerCase();
  return text.length >= 8 && (title.includes(text) || text.includes(title));
}

/**
 * The first candidate's text; null when that candidate is no lead, undefined when the window
 * holds no candidate. Candidates are lead-named blocks, or with `unnamed` paragraph-like blocks
 * that are not image captions, not inside chrome-named boxes and not inside another story's
 * `<article>` (a teaser); those shorter than a lead are passed over.
 */
function scan(h1: Element, unnamed: boolean): string | null | undefined {
  let el = nextElement(h1, true);
  for (let i = 0; el && i < WINDOW; i++) {
    // A subtitle or lead may be an <h2>; for named blocks an <h2> ends the header, as before.
    if (el.tagName === "H1" || (!unnamed && el.tagName === "H2")) return undefined;
    if (NOT_LEAD.has(el.tagName) || (unnamed && !mayHoldLead(el, h1))) {
      el = nextElement(el, true);
      continue;
    }
    if (unnamed ? isTextLeaf(el) && !isCaption(el) : isLeadName(el)) {
      const text = normalizeSpace(visibleText(el));
      if (unnamed && text.length < MIN_CHARS) {
        el = nextElement(el, true);
        continue;
      }
      if (text.length < MIN_CHARS || text.length > MAX_CHARS) return null;
      // A one-sentence deck is a subtitle, which like the headline belongs to metadata; a lead
      // paragraph of two sentences or more is the article's opening.
      if ((text.match(SENTENCE_BREAK)?.length ?? 0) < 1) return null;
      let linked = 0;
      for (const a of Array.from(el.getElementsByTagName("a"))) linked += normalizeSpace(a.textContent ?? "").length;
      if (linked > text.length * 0.3 || el.querySelector("h1, h2, h3, ul, ol, table")) return null;
      return text;
    }
    el = nextElement(el, false);
  }
  return undefined;
}

function mayHoldLead(el: Element, h1: Element): boolean {
  if (el.tagName === "ARTICLE" && !el.contains(h1)) return false;
  return !isBoilerplateName(`${el.getAttribute("class") ?? ""} ${el.getAttribute("id") ?? ""}`);
}

/** Phrasing elements: a block holding only these (and scripts) is one paragraph. */
const INLINE = new Set(["A", "SPAN", "B", "STRONG", "EM", "I", "U", "S", "SMALL", "SUB", "SUP", "BR", "ABBR", "CITE", "Q", "TIME", "MARK", "CODE", "WBR", "FONT"]);
/** Tags a lead paragraph is written in (a bare `<span>` or `<strong>` in some page builders). */
const TEXT_BLOCKS = new Set(["P", "DIV", "H2", "H3", "H4", "H5", "H6", "SPAN", "STRONG"]);

/** A paragraph-like block holding only inline content. */
function isTextLeaf(el: Element): boolean {
  if (!TEXT_BLOCKS.has(el.tagName)) return false;
  for (let c = el.firstElementChild; c; c = c.nextElementSibling) if (!INLINE.has(c.tagName) && !NON_CONTENT_TAGS.has(c.tagName)) return false;
  return true;
}

const IMAGES = new Set(["IMG", "PICTURE"]);

/** Text right after a photo in the same box: the `<div><img><p>caption</p></div>` shape. */
function isCaption(el: Element): boolean {
  const prev = el.previousElementSibling;
  if (!prev) return false;
  if (IMAGES.has(prev.tagName)) return true;
  // A wrapped image (a link or a box around it); a row of icons (share buttons) is no photo.
  return !normalizeSpace(prev.textContent ?? "") && prev.getElementsByTagName("img").length === 1;
}

/**
 * Puts the lead before the content's first block unless the content already says it. Both ends
 * are checked: a body that opens by repeating the lead's first sentence still lacks the rest.
 */
export function restoreLead(content: Element, lead: string | null): void {
  if (!lead || !content.ownerDocument) return;
  // Spacing aside: the lead's text has a space at each inline element's edge ("Swift , said"),
  // the content's does not, and drop caps split a word ("H ong Kong").
  const text = squash(content.textContent ?? "");
  const squashed = squash(lead);
  if (!text || (text.includes(squashed.slice(0, 50)) && text.includes(squashed.slice(-50)))) return;
  const p = content.ownerDocument.createElement("p");
  p.textContent = lead;
  content.insertBefore(p, content.firstChild);
}

function squash(s: string): string {
  return s.replace(/[\s\u00a0]+/g, "");
}
