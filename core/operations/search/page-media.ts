/**
 * A page's icon and images for `include_favicon` and `include_images` (api.md §8): the icon the
 * page declares (`<link rel="icon">`, else the conventional `/favicon.ico` browsers fall back
 * to), and the images it offers as its own — the social-card image (`og:image`, `twitter:image`)
 * and pictures in the main content, with their alt text as the description.
 */
import { parseDocument } from "../../extract/dom.ts";

export interface PageImage {
  url: string;
  description: string | null;
}

export interface PageMedia {
  favicon: string;
  images: PageImage[];
}

/** An absolute http(s) URL, or null. */
function absolute(href: string | null | undefined, base: string): string | null {
  const raw = href?.trim();
  if (!raw || raw.startsWith("data:")) return null;
  try {
    const url = new URL(raw, base);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

/** Where browsers look when a page declares no icon. */
export function defaultFavicon(pageUrl: string): string {
  return new URL("/favicon.ico", pageUrl).href;
}

const text = (s: string | null | undefined) => (s ?? "").replace(/\s+/g, " ").trim() || null;

/** Pictures too small to be content (tracking pixels, icons), when the markup says their size. */
function tiny(img: Element): boolean {
  const w = Number(img.getAttribute("width"));
  const h = Number(img.getAttribute("height"));
  return (w > 0 && w < 50) || (h > 0 && h < 50);
}

/**
 * @param html the whole page, for its head (icon, card image)
 * @param contentHtml the extracted main content (absolute URLs), for its pictures
 */
export function pageMedia(html: string, contentHtml: string, pageUrl: string, maxImages = 5): PageMedia {
  const doc = parseDocument(html);
  const base = absolute(doc.querySelector("base[href]")?.getAttribute("href"), pageUrl) ?? pageUrl;
  const icons = Array.from(doc.querySelectorAll("link[rel][href]")).filter((l) =>
    (l.getAttribute("rel") ?? "").toLowerCase().split(/\s+/).includes("icon"),
  );
  const favicon = icons.map((l) => absolute(l.getAttribute("href"), base)).find(Boolean) ?? defaultFavicon(pageUrl);

  const images: PageImage[] = [];
  const seen = new Set<string>();
  const add = (url: string | null, description: string | null) => {
    if (!url || seen.has(url) || images.length >= maxImages) return;
    seen.add(url);
    images.push({ url, description });
  };
  const meta = (name: string) =>
    doc.querySelector(`meta[property="${name}"][content], meta[name="${name}"][content]`)?.getAttribute("content");
  add(absolute(meta("og:image") ?? meta("og:image:url") ?? meta("twitter:image"), base), text(meta("og:image:alt") ?? meta("twitter:image:alt")));
  if (contentHtml) {
    // The cleaned content keeps no sizes: the page's own <img> elements tell which are pixels.
    const original = new Map<string, Element>();
    for (const img of Array.from(doc.querySelectorAll("img[src]"))) {
      const url = absolute(img.getAttribute("src"), base);
      if (url && !original.has(url)) original.set(url, img);
    }
    for (const img of Array.from(parseDocument(contentHtml).querySelectorAll("img"))) {
      const url = absolute(img.getAttribute("src"), pageUrl);
      const source = url ? original.get(url) : undefined;
      if (!url || (source && tiny(source))) continue;
      add(url, text(img.getAttribute("alt") ?? source?.getAttribute("alt")) ?? text(img.getAttribute("title")));
    }
  }
  return { favicon, images };
}
