/**
 * Final clean-up of the content tree: attributes reduced to the ones that carry meaning, URLs made
 * absolute, and the links listed.
 */
import { absoluteUrl, childElements, normalizeSpace } from "./dom.ts";
import type { ExtractedLink } from "../ports/extract.ts";

const KEPT_ATTRIBUTES = new Set(["href", "src", "alt", "title", "colspan", "rowspan", "datetime", "lang", "dir", "start", "cite"]);
const URL_ATTRIBUTES = ["href", "src", "cite"];

/** Strips attributes (keeping `language-*` code classes), resolves URLs, drops lazy-image stubs. */
export function cleanTree(root: Element, baseUrl: string): void {
  cleanElement(root, baseUrl);
}

function cleanElement(original: Element, baseUrl: string): void {
  const el = lowerCased(original);
  const tag = el.tagName.toUpperCase();
  if (tag === "IMG") promoteLazySource(el);
  for (const name of el.getAttributeNames()) {
    if (KEPT_ATTRIBUTES.has(name)) continue;
    if (name === "class" && tag === "CODE") {
      const lang = /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec(el.getAttribute("class") ?? "");
      if (lang) {
        el.setAttribute("class", `language-${lang[1]}`);
        continue;
      }
    }
    el.removeAttribute(name);
  }
  for (const name of URL_ATTRIBUTES) {
    const value = el.getAttribute(name);
    if (value === null) continue;
    // javascript: links do nothing outside the page; data: URIs only bloat the output.
    if (/^\s*(javascript|data|vbscript):/i.test(value)) {
      el.removeAttribute(name);
      continue;
    }
    const abs = absoluteUrl(value, baseUrl);
    if (abs) el.setAttribute(name, abs);
    else el.removeAttribute(name);
  }
  for (const child of childElements(el)) cleanElement(child, baseUrl);
}

/**
 * Readability creates its wrappers with `createElement("DIV")`, which linkedom serialises as
 * `<DIV>`; such elements are swapped for lower-case twins so the HTML output is conventional.
 */
function lowerCased(el: Element): Element {
  const name = el.localName;
  const lower = name.toLowerCase();
  if (name === lower || !el.parentNode || !el.ownerDocument) return el;
  const twin = el.ownerDocument.createElement(lower);
  for (const attr of el.getAttributeNames()) twin.setAttribute(attr, el.getAttribute(attr)!);
  while (el.firstChild) twin.appendChild(el.firstChild);
  el.parentNode.replaceChild(twin, el);
  return twin;
}

/** Lazy-loading pages keep the real image URL in a data attribute and a placeholder in `src`. */
function promoteLazySource(img: Element): void {
  const src = img.getAttribute("src") ?? "";
  if (src && !/^data:|blank|spacer|placeholder|pixel/i.test(src)) return;
  for (const name of ["data-src", "data-lazy-src", "data-original", "data-url"]) {
    const v = img.getAttribute(name);
    if (v) {
      img.setAttribute("src", v);
      return;
    }
  }
  const srcset = img.getAttribute("data-srcset") ?? img.getAttribute("srcset");
  const first = srcset?.split(",")[0]?.trim().split(/\s+/)[0];
  if (first) img.setAttribute("src", first);
}

/**
 * Every http(s) link of the page as fetched, before anything is removed: in page order, made
 * absolute against `baseUrl` (the page's <base>, else its URL), the first occurrence of each
 * URL (with its text, or an image's alt, or its title when it has no text), links to the page
 * itself by fragment skipped. What agents follow to decide where to go next (Firecrawl's `links`).
 */
export function documentLinks(document: Document, baseUrl: string, pageUrl: string): ExtractedLink[] {
  const page = withoutHash(pageUrl);
  const seen = new Map<string, ExtractedLink>();
  for (const a of Array.from(document.getElementsByTagName("a"))) {
    const href = a.getAttribute("href");
    if (!href || /^\s*(javascript|data|vbscript|mailto|tel):/i.test(href)) continue;
    const url = absoluteUrl(href, baseUrl);
    if (!url || !/^https?:/i.test(url) || (page && withoutHash(url) === page && url.includes("#"))) continue;
    const text = linkText(a);
    const prior = seen.get(url);
    if (prior) {
      if (!prior.text && text) prior.text = text;
      continue;
    }
    seen.set(url, { text, url });
  }
  return [...seen.values()];
}

function withoutHash(url: string): string | null {
  try {
    const u = new URL(url);
    u.hash = "";
    return u.href;
  } catch {
    return null;
  }
}

function linkText(a: Element): string {
  const text = normalizeSpace(a.textContent ?? "");
  if (text) return text;
  const alt = a.querySelector("img[alt]")?.getAttribute("alt");
  return normalizeSpace(alt || a.getAttribute("aria-label") || a.getAttribute("title") || "");
}

/** http(s) links of the (cleaned) tree, first occurrence of each URL, fragment-only links skipped. */
export function collectLinks(root: Element, pageUrl: string): ExtractedLink[] {
  const seen = new Set<string>();
  const links: ExtractedLink[] = [];
  let page: string | null = null;
  try {
    const u = new URL(pageUrl);
    u.hash = "";
    page = u.href;
  } catch {
    page = null;
  }
  for (const a of Array.from(root.getElementsByTagName("a"))) {
    const href = a.getAttribute("href");
    if (!href || !/^https?:/i.test(href)) continue;
    const withoutHash = href.replace(/#.*$/, "");
    if (page && withoutHash === page) continue;
    if (seen.has(href)) continue;
    seen.add(href);
    links.push({ text: normalizeSpace(a.textContent ?? ""), url: href });
  }
  return links;
}
