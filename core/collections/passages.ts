/**
 * A document's text cut into passages of a few hundred tokens, each read with the heading it stands
 * under (api.md §11): paragraphs are kept whole where they fit, a heading starts a new passage, and a
 * paragraph longer than a passage is cut between sentences.
 */
import type { PassageText } from "../ports/collections.ts";

/** About 150–250 tokens of English: long enough to hold an answer, short enough to cite. */
export const PASSAGE_WORDS = 180;
const MIN_WORDS = 25;

const wordCount = (s: string) => (s.match(/\S+/g) ?? []).length;

/** Splits an over-long paragraph between sentences (or, failing that, between words). */
function cutParagraph(p: string): string[] {
  if (wordCount(p) <= PASSAGE_WORDS) return [p];
  const sentences = p.match(/[^.!?。！？]+[.!?。！？]*\s*/g) ?? [p];
  const out: string[] = [];
  let cur = "";
  for (const s of sentences) {
    if (cur && wordCount(cur) + wordCount(s) > PASSAGE_WORDS) {
      out.push(cur.trim());
      cur = "";
    }
    cur += s;
  }
  if (cur.trim()) out.push(cur.trim());
  return out.flatMap((piece) => {
    const words = piece.split(/\s+/);
    if (words.length <= PASSAGE_WORDS * 1.5) return [piece];
    const parts: string[] = [];
    for (let i = 0; i < words.length; i += PASSAGE_WORDS) parts.push(words.slice(i, i + PASSAGE_WORDS).join(" "));
    return parts;
  });
}

/** Markdown (or plain text) to passages. Heading paths join their levels with " › ". */
export function splitPassages(markdown: string): PassageText[] {
  const out: PassageText[] = [];
  const headings: string[] = [];
  let heading: string | null = null;
  let buf: string[] = [];
  const flush = () => {
    const text = buf.join("\n\n").trim();
    buf = [];
    if (!text) return;
    const prev = out[out.length - 1];
    // A short tail under the same heading joins the passage before it.
    if (prev && prev.heading === heading && wordCount(text) < MIN_WORDS && wordCount(prev.text) + wordCount(text) <= PASSAGE_WORDS * 1.3) {
      prev.text = `${prev.text}\n\n${text}`;
      return;
    }
    out.push({ heading, text });
  };
  const blocks = markdown.replace(/\r\n?/g, "\n").split(/\n\s*\n/);
  for (const raw of blocks) {
    const block = raw.trim();
    if (!block) continue;
    const h = /^(#{1,6})\s+(.+?)\s*#*$/.exec(block.split("\n")[0]!);
    if (h) {
      flush();
      const level = h[1]!.length;
      headings.length = level - 1;
      headings[level - 1] = plain(h[2]!);
      heading = headings.filter(Boolean).join(" › ") || null;
      const rest = block.split("\n").slice(1).join("\n").trim();
      if (rest) buf.push(rest);
      continue;
    }
    for (const piece of cutParagraph(block)) {
      if (buf.length && wordCount(buf.join(" ")) + wordCount(piece) > PASSAGE_WORDS) flush();
      buf.push(piece);
    }
  }
  flush();
  return out.map((p) => ({ heading: p.heading, text: plain(p.text) }));
}

/** Markdown's link targets, emphasis and image syntax out of the way: the words are what is searched and cited. */
function plain(s: string): string {
  return s
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/(\*\*|__)(.+?)\1/g, "$2")
    .replace(/`([^`]+)`/g, "$1")
    .replace(/[ \t]+/g, " ")
    .trim();
}
