/**
 * Pruning of the element Readability picked. Readability keeps link lists, teaser cards, photo
 * captions, ad labels and the odd byline when they sit inside the winning container; they are
 * recognised here by link density, repetition and position, and removed.
 */
import { BLOCK_TAGS, childElements, measureTree, normalizeSpace, type TextStats } from "./dom.ts";

const E = (globalThis as any).__T ?? {};

const LISTS = new Set(["UL", "OL", "DL"]);
const PARAGRAPH_LIKE = new Set(["P", "H1", "H2", "H3", "H4", "H5", "H6", "LI", "DD", "DT", "TD", "BLOCKQUOTE"]);
const HEADINGS = new Set(["H1", "H2", "H3", "H4", "H5", "H6"]);
const CARD_TAGS = new Set(["DIV", "ARTICLE", "SECTION", "LI", "FIGURE", "ASIDE"]);

/** Whole-block labels that mark an ad slot, in the languages most pages use. */
const AD_LABEL = /^(advert|advertisement|advertising|ad|ads|anzeige|werbung|publicidade|publicidad|publicité|pubblicità|реклама|sponsored|sponsored content|paid content)$/i;
const COPYRIGHT = /©|\bcopyright\b|all rights reserved/i;

export function pruneContent(content: Element, title: string | null): void {
  const stats = measureTree(content);
  if (!E.noarts) keepFirstArticle(content, stats);
  prune(content, stats, normalizeTitle(title));
}

/**
 * A container holding several sibling `<article>`s and little else is a main post followed by
 * "next posts" that Readability appended as siblings; the first article is the page's own.
 */
function keepFirstArticle(content: Element, stats: Map<Element, TextStats>): void {
  const outermost = Array.from(content.getElementsByTagName("article")).filter(
    (a) => !a.parentElement?.closest("article"),
  );
  if (outermost.length < 2) return;
  const total = stats.get(content)?.text ?? 0;
  const inArticles = outermost.reduce((n, a) => n + (stats.get(a)?.text ?? 0), 0);
  const first = stats.get(outermost[0]!)?.text ?? 0;
  if (first < 400 || inArticles < total * 0.8) return;
  for (const a of outermost.slice(1)) a.remove();
}

function normalizeTitle(title: string | null): string | null {
  return title ? normalizeSpace(title).toLowerCase() : null;
}

function prune(el: Element, stats: Map<Element, TextStats>, title: string | null): void {
  const children = childElements(el);
  for (const child of children) {
    if (!child.parentNode) continue; // removed as part of a card group
    const tag = child.tagName;
    if (tag === "FIGCAPTION" && !E.nofig) {
      child.remove();
      continue;
    }
    if (BLOCK_TAGS.has(tag)) {
      const s = stats.get(child)!;
      if (s.text === 0) {
        if (!child.querySelector("img, picture, video, table, pre")) child.remove();
        continue;
      }
      if (isLinkBlock(tag, s.text, s.linked / s.text) || isNoticeBlock(child, s.text) || isTitleHeading(child, tag, title)) {
        child.remove();
        continue;
      }
    }
    prune(child, stats, title);
  }
}

function isLinkBlock(tag: string, text: number, density: number): boolean {
  if (LISTS.has(tag)) return density > 0.8;
  if (PARAGRAPH_LIKE.has(tag)) return density > 0.8 && text < 300;
  return density > 0.5 && text < 400;
}

function isNoticeBlock(el: Element, text: number): boolean {
  if (text > 300) return false;
  const t = normalizeSpace(el.textContent ?? "");
  if (!E.noad && AD_LABEL.test(t.replace(/[\s:.-]+$/, ""))) return true;
  if (!E.nocopy && COPYRIGHT.test(t) && text < 200) return true;
  return false;
}

/** The headline repeats the page title, which metadata already carries. */
function isTitleHeading(el: Element, tag: string, title: string | null): boolean {
  if (E.noh1) return false;
  if (!HEADINGS.has(tag)) return false;
  if (tag === "H1") return true;
  return !!title && normalizeSpace(el.textContent ?? "").toLowerCase() === title;
}

/**
 * Teaser cards: three or more consecutive siblings with the same tag and class, each short and each
 * holding a link. Article paragraphs do not come in link-bearing look-alike boxes; "more stories"
 * rails and product grids do.
 */
export function removeCardGroups(children: Element[], stats: Map<Element, TextStats>): void {
  let i = 0;
  while (i < children.length) {
    const first = children[i]!;
    const key = cardKey(first, stats);
    let j = i + 1;
    if (key) {
      while (j < children.length && cardKey(children[j]!, stats) === key) j++;
      if (j - i >= 3) {
        for (let k = i; k < j; k++) children[k]!.remove();
      }
    }
    i = key ? j : i + 1;
  }
}

function cardKey(el: Element, stats: Map<Element, TextStats>): string | null {
  if (!CARD_TAGS.has(el.tagName)) return null;
  const cls = el.getAttribute("class");
  if (!cls) return null;
  const s = stats.get(el);
  if (!s || s.text > 300 || s.linked === 0) return null;
  return `${el.tagName}.${cls}`;
}
