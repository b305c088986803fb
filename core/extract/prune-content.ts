/**
 * Pruning of the element Readability picked. Readability keeps link lists, teaser rails and photo
 * captions when they sit inside the winning container; those are measured here by link density and
 * position and removed.
 */
import { childElements } from "./dom.ts";

interface TextStats {
  text: number;
  linked: number;
}

const HEADINGS = new Set(["H1", "H2", "H3", "H4", "H5", "H6"]);
const LISTS = new Set(["UL", "OL", "DL"]);
const BLOCKS = new Set([
  "P", "DIV", "SECTION", "UL", "OL", "DL", "LI", "TABLE", "BLOCKQUOTE", "H1", "H2", "H3", "H4", "H5",
  "H6", "FIGURE", "ASIDE", "ARTICLE", "HEADER", "FOOTER", "NAV", "CENTER", "DD", "DT", "TR", "TD",
]);

export function pruneContent(content: Element): void {
  const stats = new Map<Element, TextStats>();
  measure(content, stats, false);
  prune(content, stats);
}

function measure(el: Element, stats: Map<Element, TextStats>, inLink: boolean): TextStats {
  const s: TextStats = { text: 0, linked: 0 };
  for (let child = el.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === 3) {
      const n = countNonSpace((child as Text).data);
      s.text += n;
      if (inLink) s.linked += n;
    } else if (child.nodeType === 1) {
      const c = measure(child as Element, stats, inLink || (child as Element).tagName === "A");
      s.text += c.text;
      s.linked += c.linked;
    }
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

function prune(el: Element, stats: Map<Element, TextStats>): void {
  for (const child of childElements(el)) {
    const tag = child.tagName.toUpperCase();
    if (tag === "FIGCAPTION") {
      child.remove();
      continue;
    }
    if (BLOCKS.has(tag)) {
      const s = stats.get(child)!;
      const density = s.text ? s.linked / s.text : 0;
      if (isLinkBlock(tag, s.text, density)) {
        child.remove();
        continue;
      }
    }
    prune(child, stats);
  }
}

const E = (globalThis as any).__T ?? {};
const PARA = new Set(["P", "H1", "H2", "H3", "H4", "H5", "H6", "LI", "DD", "DT", "TD", "BLOCKQUOTE"]);
function isLinkBlock(tag: string, text: number, density: number): boolean {
  if (LISTS.has(tag)) return density > (E.list ?? 0.8);
  if (PARA.has(tag)) return density > (E.para ?? 0.8) && text < (E.paraMax ?? 300);
  return density > (E.div ?? 0.5) && text < (E.divMax ?? 400);
}

export { HEADINGS };
