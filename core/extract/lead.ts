/**
 * The lead (standfirst, intro, deck) of an article: the short paragraph right under the headline
 * that many CMSs put in the article's header, outside the container that holds the body text.
 * Boilerplate removal drops headers, and the scorer picks the body, so the lead is found before
 * either runs, by its name and its place (within a few elements after an `<h1>`), and restored
 * at the top of the content when the content does not already hold it. Only leads of two
 * sentences or more: a one-line deck under the headline is a subtitle, left to metadata as the
 * headline is.
 */
import { NON_CONTENT_TAGS, normalizeSpace } from "./dom.ts";

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

/** The lead's text, or null: the first lead-named block within a few elements after the first `<h1>`. */
export function findLead(body: Element): string | null {
  const h1 = body.querySelector("h1");
  if (!h1) return null;
  let el = nextElement(h1, true);
  for (let i = 0; el && i < WINDOW; i++) {
    if (el.tagName === "H1" || el.tagName === "H2") return null;
    if (NOT_LEAD.has(el.tagName)) {
      el = nextElement(el, true);
      continue;
    }
    if (isLeadName(el)) {
      const text = normalizeSpace(visibleText(el));
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
  return null;
}

/**
 * Puts the lead before the content's first block unless the content already says it. Both ends
 * are checked: a body that opens by repeating the lead's first sentence still lacks the rest.
 */
export function restoreLead(content: Element, lead: string | null): void {
  if (!lead || !content.ownerDocument) return;
  const text = normalizeSpace(content.textContent ?? "");
  if (!text || (text.includes(lead.slice(0, 60)) && text.includes(lead.slice(-60)))) return;
  const p = content.ownerDocument.createElement("p");
  p.textContent = lead;
  content.insertBefore(p, content.firstChild);
}
