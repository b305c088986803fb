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

/** The value of one attribute in a tag's source text (quoted or bare), entities left as written. */
function attribute(tag: string, name: string): string | null {
  const m = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, "i").exec(tag);
  return m ? (m[1] ?? m[2] ?? m[3] ?? null) : null;
}

/** Pictures too small to be content (tracking pixels, icons), when the markup says their size. */
function tiny(tag: string): boolean {
  const w = Number(attribute(tag, "width"));
  const h = Number(attribute(tag, "height"));
  return (w > 0 && w < 50) || (h > 0 && h < 50);
}

/** The document head only: parsing a whole page a second time costs as much as extracting it. */
function headOf(html: string): string {
  const end = html.search(/<\/head\s*>|<body[\s>]/i);
  return end > 0 ? html.slice(0, end) : html.slice(0, 65_536);
}

/**
 * @param html the whole page, for its head (icon, card image) and its images' sizes
 * @param contentHtml the extracted main content (absolute URLs), for its pictures
 */
export function pageMedia(html: string, contentHtml: string, pageUrl: string, maxImages = 5): PageMedia {
  const doc = parseDocument(headOf(html));
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
    // The cleaned content keeps no sizes: the page's own <img> tags tell which are pixels.
    const pixels = new Set<string>();
    for (const [tag] of html.matchAll(/<img\b[^>]*>/gi)) {
      const url = tiny(tag) ? absolute(attribute(tag, "src"), base) : null;
      if (url) pixels.add(url);
    }
    for (const img of Array.from(parseDocument(contentHtml).querySelectorAll("img"))) {
      const url = absolute(img.getAttribute("src"), pageUrl);
      if (!url || pixels.has(url)) continue;
      add(url, text(img.getAttribute("alt")) ?? text(img.getAttribute("title")));
    }
  }
  return { favicon, images };
}
