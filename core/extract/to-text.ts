/**
 * DOM → plain text. Block elements become paragraphs separated by blank lines, list items and table
 * rows single lines, `<br>` a line break, `<pre>` keeps its whitespace. Unlike `textContent`, words
 * from adjacent blocks ("…treatment" + "Credit: …") never run together.
 */
import { BLOCK_TAGS, NON_CONTENT_TAGS } from "./dom.ts";

/** Markers in the output buffer; resolved to real newlines in `finish`. */
const PARAGRAPH = "\u0000P";
const LINE = "\u0000L";

const LINE_TAGS = new Set(["LI", "TR", "DT", "DD"]);
const CELL_TAGS = new Set(["TD", "TH"]);

export function renderText(root: Element): string {
  const out: string[] = [];
  walk(root, out, false);
  return finish(out);
}

function walk(parent: Node, out: string[], pre: boolean): void {
  for (let child = parent.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === 3) {
      const data = (child as Text).data;
      out.push(pre ? protectPre(data) : data.replace(/[\s]+/g, " "));
      continue;
    }
    if (child.nodeType !== 1) continue;
    const el = child as Element;
    const tag = el.tagName.toUpperCase();
    if (NON_CONTENT_TAGS.has(tag)) continue;
    if (tag === "BR") {
      out.push(LINE);
      continue;
    }
    if (CELL_TAGS.has(tag)) {
      out.push("\t");
      walk(el, out, pre);
      out.push("\t");
      continue;
    }
    if (LINE_TAGS.has(tag)) {
      out.push(LINE);
      walk(el, out, pre);
      out.push(LINE);
      continue;
    }
    if (BLOCK_TAGS.has(tag)) {
      const isPre = pre || tag === "PRE";
      out.push(PARAGRAPH);
      walk(el, out, isPre);
      out.push(PARAGRAPH);
      continue;
    }
    if (tag === "IMG" || tag === "INPUT" || tag === "SELECT" || tag === "BUTTON") {
      // Images and form controls carry no article text; separate words around them.
      out.push(" ");
      continue;
    }
    walk(el, out, pre);
  }
}

/** Preformatted spaces survive `finish`'s whitespace collapsing as placeholders. */
const PRE_SPACE = "\u0001";
const PRE_TAB = "\u0002";

function protectPre(data: string): string {
  return data.replace(/\r\n?/g, "\n").replace(/ /g, PRE_SPACE).replace(/\t/g, PRE_TAB).replace(/\n/g, LINE);
}

function finish(parts: string[]): string {
  const joined = parts.join("");
  const paragraphs: string[] = [];
  for (const block of joined.split(PARAGRAPH)) {
    const lines: string[] = [];
    for (const raw of block.split(LINE)) {
      const line = raw.replace(/[ \t\u00a0]+/g, " ").trim();
      if (line) lines.push(line);
    }
    if (lines.length) paragraphs.push(lines.join("\n"));
  }
  return paragraphs.join("\n\n").replace(/\u0001/g, " ").replace(/\u0002/g, "\t");
}
