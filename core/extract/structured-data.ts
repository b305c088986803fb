/**
 * The structured data a page states about itself, returned as it states it: its JSON-LD blocks,
 * its microdata items (https://html.spec.whatwg.org/multipage/microdata.html) and its Open Graph
 * properties. Bounded, so that a page cannot make its metadata larger than its content: at most
 * 20 JSON-LD blocks of 64 KB in all, and 50 microdata items, nested at most 6 deep, each value at
 * most 2,000 characters.
 */
import { normalizeSpace } from "./dom.ts";
import type { StructuredData } from "../ports/extract.ts";

const MAX_BLOCKS = 20;
const MAX_ITEMS = 50;
const MAX_DEPTH = 6;
const MAX_VALUE = 2_000;
const MAX_PROPERTIES = 100;
/** JSON-LD kept in all, as JSON: a product page's listing can run to megabytes. */
const MAX_JSON_LD_CHARS = 64 * 1024;

export type MicrodataItem = { type: string[]; id?: string; properties: Record<string, unknown[]> };

/** Each JSON-LD block as the page wrote it (parsed), broken ones left out. */
export function jsonLdBlocks(blocks: string[], parse: (raw: string) => unknown): unknown[] {
  const out: unknown[] = [];
  let chars = 0;
  for (const raw of blocks) {
    if (out.length >= MAX_BLOCKS || chars + raw.length > MAX_JSON_LD_CHARS) break;
    const parsed = parse(raw);
    if (parsed !== undefined && parsed !== null && typeof parsed === "object") {
      out.push(parsed);
      chars += raw.length;
    }
  }
  return out;
}

const URL_VALUED = new Set(["A", "AREA", "LINK"]);
const SRC_VALUED = new Set(["AUDIO", "EMBED", "IFRAME", "IMG", "SOURCE", "TRACK", "VIDEO"]);

function cut(s: string): string {
  return s.length > MAX_VALUE ? s.slice(0, MAX_VALUE) : s;
}

/** A property's value, as the microdata spec reads it from its element. */
function propertyValue(el: Element, depth: number): unknown {
  if (el.hasAttribute("itemscope")) return depth < MAX_DEPTH ? item(el, depth + 1) : null;
  const tag = el.tagName.toUpperCase();
  if (tag === "META") return cut(el.getAttribute("content") ?? "");
  if (URL_VALUED.has(tag)) return cut(el.getAttribute("href") ?? "");
  if (SRC_VALUED.has(tag)) return cut(el.getAttribute("src") ?? "");
  if (tag === "OBJECT") return cut(el.getAttribute("data") ?? "");
  if (tag === "DATA" || tag === "METER") return cut(el.getAttribute("value") ?? "");
  if (tag === "TIME" && el.hasAttribute("datetime")) return cut(el.getAttribute("datetime") ?? "");
  return cut(normalizeSpace(el.textContent ?? ""));
}

/** One item: its type(s), id and the properties of the elements below it (up to the next item). */
function item(root: Element, depth: number): MicrodataItem {
  const type = (root.getAttribute("itemtype") ?? "").split(/\s+/).filter(Boolean);
  const id = root.getAttribute("itemid");
  const properties: Record<string, unknown[]> = {};
  let count = 0;
  const stack: Element[] = [];
  for (let c = root.lastElementChild; c; c = c.previousElementSibling) stack.push(c);
  while (stack.length && count < MAX_PROPERTIES) {
    const el = stack.pop()!;
    const names = (el.getAttribute("itemprop") ?? "").split(/\s+/).filter(Boolean);
    if (names.length) {
      const value = propertyValue(el, depth);
      for (const name of names) (properties[name] ??= []).push(value);
      count++;
    }
    // A nested item's own properties are its, not this item's.
    if (el.hasAttribute("itemscope")) continue;
    for (let c = el.lastElementChild; c; c = c.previousElementSibling) stack.push(c);
  }
  return { type, ...(id ? { id } : {}), properties };
}

/** The page's top-level microdata items (elements with `itemscope` that are no other item's property). */
export function microdataItems(tops: Element[]): MicrodataItem[] {
  return tops.slice(0, MAX_ITEMS).map((el) => item(el, 0));
}

/** `og:*` properties of the page's <meta> tags, by their full name (`og:title`, `og:image`). */
export function openGraph(meta: Map<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of meta) if (k.startsWith("og:")) out[k] = cut(v);
  return out;
}

/** Null when the page states nothing of the kind. */
export function structuredData(jsonLd: unknown[], microdata: MicrodataItem[], og: Record<string, string>): StructuredData | null {
  if (!jsonLd.length && !microdata.length && !Object.keys(og).length) return null;
  return { json_ld: jsonLd, microdata, open_graph: og };
}
