/**
 * Pruning of the element Readability picked. Readability keeps link lists, teaser cards, photo
 * captions, ad labels and the odd byline when they sit inside the winning container; they are
 * recognised here by link density, repetition and position, and removed.
 */
import { BLOCK_TAGS, childElements, measureTree, normalizeSpace, type TextStats } from "./dom.ts";
import { isNoticeText } from "./notices.ts";

const LISTS = new Set(["UL", "OL", "DL"]);
const PARAGRAPH_LIKE = new Set(["P", "H1", "H2", "H3", "H4", "H5", "H6", "LI", "DD", "DT", "TD", "BLOCKQUOTE"]);
const HEADINGS = new Set(["H1", "H2", "H3", "H4", "H5", "H6"]);

/** Whole-block labels that mark an ad slot, in the languages most pages use. */
const AD_LABEL = /^(advert|advertisement|advertising|ad|ads|anzeige|werbung|publicidade|publicidad|publicité|pubblicità|реклама|sponsored|sponsored content|paid content)$/i;
const COPYRIGHT = /©|\bcopyright\b|all rights reserved/i;

/**
 * `thread`: the content is a discussion's posts (see removeBoilerplate); there a box opening with an
 * image is a post beside its author's avatar, not a captioned photo.
 */
export function pruneContent(content: Element, title: string | null, thread = false): void {
  const stats = measureTree(content);
  keepFirstArticle(content, stats);
  prune(content, stats, normalizeTitle(title), thread);
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

function prune(el: Element, stats: Map<Element, TextStats>, title: string | null, thread: boolean): void {
  const children = childElements(el);
  for (const child of children) {
    const tag = child.tagName;
    if (tag === "FIGCAPTION") {
      child.remove();
      continue;
    }
    if (BLOCK_TAGS.has(tag)) {
      const s = stats.get(child)!;
      if (s.text === 0) {
        if (!child.querySelector("img, picture, video, table, pre")) child.remove();
        continue;
      }
      const linkBlock = isLinkBlock(tag, s.text, s.linked / s.text) || isLabelledLink(child, tag, s);
      if (linkBlock || isNoticeBlock(child, s.text) || isTitleHeading(child, tag, title) || (!thread && isCaptionedImage(child, s.text, stats))) {
        // "Read also:" before a removed link list introduces nothing any more.
        if (linkBlock) removeLabel(child.previousElementSibling, stats);
        child.remove();
        continue;
      }
    }
    prune(child, stats, title, thread);
  }
}

function isLinkBlock(tag: string, text: number, density: number): boolean {
  if (LISTS.has(tag)) return density > 0.8;
  if (PARAGRAPH_LIKE.has(tag)) return density > 0.8 && text < 300;
  return density > 0.5 && text < 400;
}

/** A label ending in a colon ("Read also:", "Mehr Themen:"), short enough to be no sentence. */
const LABEL = /[:：]\s*$/;
const LABEL_MAX = 80;

/**
 * `<p><b>Read also: <a>Another story</a></b></p>`: one headline link after a short label, nothing
 * else. The label keeps the link density under the link-block threshold; the shape gives it away.
 */
function isLabelledLink(el: Element, tag: string, s: TextStats): boolean {
  if (!PARAGRAPH_LIKE.has(tag) || s.text > 250 || s.linked < s.text * 0.5) return false;
  const links = el.getElementsByTagName("a");
  if (links.length !== 1) return false;
  const t = normalizeSpace(el.textContent ?? "");
  const linkText = normalizeSpace(links[0]!.textContent ?? "");
  // A headline, not a handle or a short value ("Account: @name").
  if (linkText.length < 25) return false;
  const at = t.indexOf(linkText);
  if (at <= 0 || t.slice(at + linkText.length).replace(/[\s.…»>)\]]+/g, "") !== "") return false;
  const label = t.slice(0, at);
  return label.length <= LABEL_MAX && LABEL.test(label);
}

function removeLabel(el: Element | null, stats: Map<Element, TextStats>): void {
  if (!el || !PARAGRAPH_LIKE.has(el.tagName)) return;
  const s = stats.get(el);
  if (!s || s.text > LABEL_MAX) return;
  if (LABEL.test(normalizeSpace(el.textContent ?? ""))) el.remove();
}

function isNoticeBlock(el: Element, text: number): boolean {
  if (text > 300) return false;
  const t = normalizeSpace(el.textContent ?? "");
  if (AD_LABEL.test(t.replace(/[\s:.-]+$/, ""))) return true;
  if (COPYRIGHT.test(t) && text < 200) return true;
  // Judged by its wording only as a single block: a header holding a credit line and a headline is more.
  return isNoticeText(t) && !hasBlockChild(el);
}

function hasBlockChild(el: Element): boolean {
  for (let c = el.firstElementChild; c; c = c.nextElementSibling) if (BLOCK_TAGS.has(c.tagName)) return true;
  return false;
}

/** The headline repeats the page title, which metadata already carries. */
function isTitleHeading(el: Element, tag: string, title: string | null): boolean {
  if (!HEADINGS.has(tag)) return false;
  if (tag === "H1") return true;
  return !!title && normalizeSpace(el.textContent ?? "").toLowerCase() === title;
}

const IMAGE_TAGS = new Set(["IMG", "PICTURE", "FIGURE"]);

/**
 * `<div><img><p>caption</p></div>`: an image with a short caption and nothing else, the markup many
 * CMSs use instead of `<figure>`. Captions describe photos; they are not the article's text.
 */
function isCaptionedImage(el: Element, text: number, stats: Map<Element, TextStats>): boolean {
  if ((el.tagName !== "DIV" && el.tagName !== "FIGURE") || text > 300) return false;
  const first = el.firstElementChild;
  // The image may come wrapped (in a link, or in the <p> Readability puts around loose inline content).
  const image = !!first && (IMAGE_TAGS.has(first.tagName) || (stats.get(first)?.text === 0 && !!first.querySelector("img, picture")));
  if (!image) return false;
  let count = 0;
  for (let c: Element | null = first; c; c = c.nextElementSibling) count++;
  return count <= 3;
}
