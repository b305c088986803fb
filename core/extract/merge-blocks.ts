/**
 * Content-block merge after Readability's pick, in the spirit of jusText's context-sensitive
 * classification. Page-builder layouts (WPBakery rows, AEM grids, TYPO3 content elements, Drupal
 * paragraphs) split an article's text over sibling blocks at different depths, and Readability's
 * scorer picks one of them. Every leaf text block of the page is numbered in document order before
 * the scorer runs; afterwards, blocks the scorer left in the page are added to the content when
 * they read like prose (long, few links) and sit next to the picked text in document order, with no
 * run of chrome (blocks boilerplate removal dropped, short or link-heavy blocks) in between.
 */
import { leafBlocks } from "./content-edges.ts";
import { isLeadName } from "./lead.ts";

const ATTR = "data-qi";

/** What the merge needs to know about a block or unit left in the page. */
interface BlockInfo {
  /** Collapsed text length. */
  text: number;
  /** Share of that text inside links. */
  linkDensity: number;
  heading: boolean;
  /** Sentence ends: a full stop, question or exclamation mark followed by a space or the end. */
  sentences: number;
  words: number;
}

/** How many blocks were numbered (a `data-qi` attribute each; cleanTree strips it from the output). */
export interface BlockIndex {
  count: number;
}

const HEADINGS = new Set(["H1", "H2", "H3", "H4", "H5", "H6"]);
/** Blocks whose meaning depends on their container (list items, cells); never moved alone. */
const CONTAINED = new Set(["LI", "DT", "DD", "TD", "TH", "TR", "CAPTION", "SUMMARY", "FIGCAPTION"]);

function collapsedLength(s: string): number {
  return s.replace(/\s+/g, " ").trim().length;
}

/** Numbers the leaf blocks of `body` in document order. */
export function indexBlocks(body: Element): BlockIndex {
  let count = 0;
  // Empty blocks (spacers, icon wrappers) say nothing about what lies between two texts.
  for (const el of leafBlocks(body)) if (/\S/.test(el.textContent ?? "")) el.setAttribute(ATTR, String(count++));
  return { count };
}

const SENTENCE_END = /[^\s.!?…][.!?…]["'“”»«)]?(?=\s|$)/g;
const WORD = /\S+/g;

/** Measured when needed, on the page as the scorer left it (scripts and styles gone). */
function blockInfo(el: Element): BlockInfo {
  const text = el.textContent ?? "";
  const length = collapsedLength(text);
  let linked = 0;
  if (length > 0) for (const a of Array.from(el.getElementsByTagName("a"))) linked += collapsedLength(a.textContent ?? "");
  return {
    text: length,
    linkDensity: length > 0 ? linked / length : 0,
    heading: HEADINGS.has(el.tagName),
    sentences: text.match(SENTENCE_END)?.length ?? 0,
    words: text.match(WORD)?.length ?? 0,
  };
}

/** Prose: long enough to be a paragraph, few links. */
function isGood(b: BlockInfo, el: Element, before: boolean): boolean {
  if (b.heading || b.text < 80 || b.linkDensity > 0.2) return false;
  // Lists and tables hold items and figures rather than sentences, but phrases rather than tokens.
  if (el.matches(UNIT_SELECTOR)) return b.words >= 3 * el.querySelectorAll(`[${ATTR}]`).length;
  // Before the text, a one-sentence block named a summary or intro is a deck, which like the headline
  // belongs to metadata (lead.ts restores leads of two sentences or more).
  return b.sentences >= (before && isLeadName(el) ? 2 : 1);
}

/** Gap tolerated between picked text and an added block: this many non-prose blocks in a row. */
const MAX_GAP = 2;

/** Where a contained block (list item, cell) sits: its list or table moves and is judged as one unit. */
const UNIT_SELECTOR = "ul, ol, dl, table";

interface Unit {
  /** Block numbers the unit covers. */
  from: number;
  to: number;
  /** The element to move; null when the scorer or boilerplate removal took the blocks out of the page. */
  el: Element | null;
}

/**
 * Moves the prose blocks (and the headings and short lines between them) that sit before, after or
 * inside the pick in document order from the page into `content`, each before the picked block that
 * followed it in the page (after the pick's last block when none did).
 */
export function mergeBlocks(content: Element, body: Element, index: BlockIndex): void {
  const inContent = new Map<number, Element>();
  for (const el of Array.from(content.querySelectorAll(`[${ATTR}]`))) inContent.set(Number(el.getAttribute(ATTR)), el);
  if (inContent.size === 0) return;
  const inPage = new Map<number, Element>();
  for (const el of Array.from(body.querySelectorAll(`[${ATTR}]`))) inPage.set(Number(el.getAttribute(ATTR)), el);
  if (inPage.size === 0) return;
  const picked = [...inContent.keys()].sort((a, b) => a - b);
  const lo = picked[0]!;
  const hi = picked[picked.length - 1]!;
  const add: Unit[] = [];
  // Forward from the pick's end, backward from its start, and through the gaps inside it (blocks
  // the scorer left out between two it took).
  walk(hi + 1, 1, index.count, inContent, inPage, add);
  walk(lo - 1, -1, -1, inContent, inPage, add);
  for (let k = 1; k < picked.length; k++) {
    if (picked[k]! > picked[k - 1]! + 1) walk(picked[k - 1]! + 1, 1, picked[k]!, inContent, inPage, add);
  }
  if (add.length === 0) return;
  add.sort((a, b) => a.from - b.from);
  let tail: Element | null = null;
  for (const unit of add) {
    const el = unit.el!;
    const next = picked.find((p) => p > unit.from);
    if (next !== undefined) {
      const anchor = firstAncestor(inContent.get(next)!, content, next);
      anchor.parentNode!.insertBefore(el, anchor);
    } else {
      const after = tail ?? lastAncestor(inContent.get(hi)!, content, hi);
      after.parentNode!.insertBefore(el, after.nextSibling);
      tail = el;
    }
  }
}

/** Adds to `add` the units from `start` towards `end` (exclusive) that read as prose, until too long a gap. */
function walk(start: number, dir: number, end: number, inContent: Map<number, Element>, inPage: Map<number, Element>, add: Unit[]): void {
  let gap = 0;
  const pending: Unit[] = [];
  let i = start;
  while (i !== end && !inContent.has(i)) {
    const unit = unitAt(i, dir, end, inPage);
    i = dir === 1 ? unit.to + 1 : unit.from - 1;
    const b = unit.el ? blockInfo(unit.el) : null;
    if (b && b.text === 0) continue;
    if (b && isGood(b, unit.el!, dir === -1)) {
      add.push(...pending, unit);
      pending.length = 0;
      gap = 0;
      continue;
    }
    if (++gap > MAX_GAP) break;
    // Headings and short lines between prose blocks join when prose follows.
    if (b && b.linkDensity <= 0.5) pending.push(unit);
    else pending.length = 0;
  }
}

/** The unit holding block `i`, extended in direction `dir` over the blocks of the same list or table. */
function unitAt(i: number, dir: number, end: number, inPage: Map<number, Element>): Unit {
  const el = inPage.get(i);
  if (!el) return { from: i, to: i, el: null };
  if (!CONTAINED.has(el.tagName)) return { from: i, to: i, el };
  const container = el.parentElement?.closest(UNIT_SELECTOR) ?? null;
  if (!container) return { from: i, to: i, el: null };
  let from = i;
  let to = i;
  for (let j = i + dir; j !== end; j += dir) {
    const other = inPage.get(j);
    if (!other || !container.contains(other)) break;
    if (dir === 1) to = j;
    else from = j;
  }
  // The container's own numbers may reach further the other way; they are covered by the same move.
  return { from, to, el: container };
}

function qi(el: Element | null): number {
  return el ? Number(el.getAttribute(ATTR) ?? NaN) : NaN;
}

/** The outermost ancestor of `el` under `content` whose first block is `el`. */
function firstAncestor(el: Element, content: Element, i: number): Element {
  let cur = el;
  while (cur.parentElement && cur.parentElement !== content) {
    const first = cur.parentElement.querySelector(`[${ATTR}]`);
    if (qi(first) !== i) break;
    cur = cur.parentElement;
  }
  return cur;
}

/** The outermost ancestor of `el` under `content` whose last block is `el`. */
function lastAncestor(el: Element, content: Element, i: number): Element {
  let cur = el;
  while (cur.parentElement && cur.parentElement !== content) {
    const all = cur.parentElement.querySelectorAll(`[${ATTR}]`);
    if (qi(all[all.length - 1] ?? null) !== i) break;
    cur = cur.parentElement;
  }
  return cur;
}
