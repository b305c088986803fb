/**
 * Clean-up at the edges of the extracted content, where boilerplate collects once the scorer has
 * chosen a container: bylines and datelines before the first real paragraph, and headings left
 * without a section after their link lists or teasers were removed ("More stories", "Popular"),
 * and a comment section that starts with its label ("12 Comments") near the end.
 */
import { BLOCK_TAGS, normalizeSpace, textLength } from "./dom.ts";


const HEADING_LEVEL: Record<string, number> = { H1: 1, H2: 2, H3: 3, H4: 4, H5: 5, H6: 6 };

/** Blocks that hold text but no other blocks, in document order. */
export function leafBlocks(root: Element): Element[] {
  const out: Element[] = [];
  collect(root, out);
  return out;
}

function collect(el: Element, out: Element[]): boolean {
  let hasBlock = false;
  for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
    const childHasBlock = collect(c, out);
    if (BLOCK_TAGS.has(c.tagName)) {
      hasBlock = true;
      if (!childHasBlock) out.push(c);
    } else if (childHasBlock) {
      hasBlock = true;
    }
  }
  return hasBlock;
}

export function tidyEdges(content: Element): void {
  const leaves = leafBlocks(content);
  removeCommentTail(leaves);
  removeTrailingHeadings(leaves.filter((l) => l.parentNode));
  removeLeadingMeta(leaves.filter((l) => l.parentNode));
}

/**
 * Headings at the very end head nothing: their link lists or teasers were removed. Only the tail
 * is trimmed; a heading whose section inside the article was pruned may still introduce the next.
 */
function removeTrailingHeadings(leaves: Element[]): void {
  for (let i = leaves.length - 1; i >= 0; i--) {
    const leaf = leaves[i]!;
    if (!leaf.parentNode) continue;
    if (!HEADING_LEVEL[leaf.tagName]) {
      if ((leaf.textContent ?? "").trim()) return;
      continue;
    }
    leaf.remove();
  }
}

/** Dates (numeric, or with a month name) and times, as bylines and datelines write them. */
const DATE_LIKE =
  /\b\d{1,4}[./-]\d{1,2}[./-]\d{1,4}\b|\b\d{1,2}:\d{2}\b|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|\b\d{1,2}\.?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b/i;
const BYLINE = /^(by|von|por|par|di|door|posted|published|updated|written)\b/i;

/**
 * Short date or byline lines before the first paragraph of substance. They repeat metadata
 * (`published_at`, `author`) and are not article text.
 */
function removeLeadingMeta(leaves: Element[]): void {
  for (const leaf of leaves) {
    const text = normalizeSpace(leaf.textContent ?? "");
    if (text.length >= 150) return;
    if (text.length === 0) continue;
    // A sentence mentioning a date is article text; a dateline is a fragment.
    const fragment = !/[.!?]["”’)]?$/.test(text);
    if ((BYLINE.test(text) && text.length <= 60) || (DATE_LIKE.test(text) && fragment && text.length <= 100)) leaf.remove();
  }
}

/**
 * The label that opens a comment section ("3 Kommentare", "Comments", "Leave a reply"), as a
 * block of its own. Readers' comments are not the article.
 */
const COMMENTS_LABEL =
  /^(?:\d+\s+)?(?:comments?|responses?|replies|kommentare?|comentarios?|comentários?|commentaires?|commenti|komentarze?|reacties|reaktionen|leserkommentare|leave a (?:comment|reply)|post a comment|write a comment|add a comment|join the discussion|kommentar (?:schreiben|verfassen|hinterlassen)|schreibe(?:n sie)? einen kommentar|deja (?:un|tu) comentario|laisser un commentaire|lascia un commento|dodaj komentarz)\s*[:(]?\s*(?:\d+\s*\)?)?$/iu;

/** Share of the content's text that must come before a comments label for the tail to go. */
const TAIL_AFTER = 0.6;

/** A comments label in the last part of the content starts the comment section: it and what follows go. */
function removeCommentTail(leaves: Element[]): void {
  const lengths = leaves.map(textLength);
  const total = lengths.reduce((a, b) => a + b, 0);
  let before = 0;
  for (let i = 0; i < leaves.length; i++) {
    if (before >= total * TAIL_AFTER && lengths[i]! <= 60 && COMMENTS_LABEL.test(normalizeSpace(leaves[i]!.textContent ?? ""))) {
      for (let j = i; j < leaves.length; j++) leaves[j]!.remove();
      return;
    }
    before += lengths[i]!;
  }
}
