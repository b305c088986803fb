/**
 * Mozilla Readability's pick of the main content element, with its retries made cheaper on short
 * pages and the result unchanged.
 *
 * When an attempt's text (whitespace-collapsed, as Readability measures it) is shorter than
 * `charThreshold`, Readability re-parses the page from the HTML it saved before its first attempt
 * and tries again with a filter loosened, up to four attempts; when all fail it returns the longest
 * (the earliest of equals). An attempt only moves, re-tags and deletes the body's nodes, so its text
 * is never longer than the body's. On a page whose body holds less than the threshold, every attempt
 * fails, and the four attempts plus four re-parses cost about six times a normal page (a sixth of
 * the article set's pages, a quarter of its extraction time). There, the threshold is lowered to
 * the body's own length: the first attempt that keeps the whole text wins at once, and it is the
 * one the sort would have picked; when none does, the attempts run as before. Only the pick is
 * the same: the page is left as the winning attempt left it (nothing reads it afterwards; the pick
 * is a new element outside it).
 */
import { lib } from "../lazy.ts";

export interface PickOptions {
  /** Readability's charThreshold: below it an attempt counts as failed. */
  retryBelow: number;
}

/** Text length as Readability measures it (`_getInnerText` with whitespace normalised). */
function readabilityLength(el: Element): number {
  return (el.textContent ?? "").trim().replace(/\s{2,}/g, " ").length;
}

/** Head children that hold no text Readability could score or keep (it walks the head too). */
const HEAD_ONLY = new Set(["TITLE", "META", "LINK", "BASE", "SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE"]);

/**
 * True when only body text can end up in an attempt: the document element holds just the head and
 * the body, and the head only metadata. Otherwise the body's length is no bound and nothing changes.
 */
function bodyBoundsAttempts(document: Document, body: Element): boolean {
  const root = document.documentElement;
  if (!root || body.parentElement !== root) return false;
  for (let c = root.firstElementChild; c; c = c.nextElementSibling) {
    if (c === body) continue;
    if (c.tagName !== "HEAD") return false;
    for (let h = c.firstElementChild; h; h = h.nextElementSibling) if (!HEAD_ONLY.has(h.tagName) || h.firstElementChild) return false;
  }
  return true;
}

export function readabilityPick(document: Document, body: Element, options: PickOptions): Element | null {
  const available = readabilityLength(body);
  const lowered = available > 0 && available < options.retryBelow && bodyBoundsAttempts(document, body);
  const reader = new (lib("readability").Readability)<Element>(document, {
    // Classes stay until pruning has used them; cleanTree strips them afterwards.
    keepClasses: true,
    // Metadata (JSON-LD included) is read before this point, from the untouched document.
    disableJSONLD: true,
    charThreshold: lowered ? available : options.retryBelow,
    // Keep the DOM element: we prune and render it ourselves instead of re-parsing serialised HTML.
    serializer: (node) => node as Element,
  });
  return reader.parse()?.content ?? null;
}
