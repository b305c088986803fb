/** XML parts of office documents, read through linkedom's XML parser, and the HTML written from them. */
import { lib } from "../../lazy.ts";

export function parseXml(text: string): Document {
  const { DOMParser } = lib("linkedom");
  return new DOMParser().parseFromString(text, "text/xml") as unknown as Document;
}

/** An element's name without its prefix (`text:p` → `p`): the formats fix their prefixes, but only the local name matters. */
export const local = (el: Element): string => el.tagName.slice(el.tagName.indexOf(":") + 1);

export const children = (el: Element): Element[] => Array.from(el.children);

/** Every element below `root` (document order) with this prefixed name. */
export const all = (root: Element | Document, name: string): Element[] => Array.from(root.getElementsByTagName(name));

/** Every element below `root` whose local name is `name` (any prefix), in document order. */
export function byLocal(root: Element, name: string): Element[] {
  const out: Element[] = [];
  const stack = children(root).reverse();
  while (stack.length) {
    const el = stack.pop()!;
    if (local(el) === name) out.push(el);
    for (let c = el.lastElementChild; c; c = c.previousElementSibling) stack.push(c);
  }
  return out;
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** A cut on what one document may make: past it the reading stops and says so. */
export class DocumentError extends Error {}
