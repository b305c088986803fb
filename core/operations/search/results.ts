/**
 * The parts of a search result that come from more than one place: its icon (the page's own,
 * else the one a backend gave, else `/favicon.ico`) and the answer's `images[]` (backends'
 * thumbnails first, then the pictures of the pages read), deduplicated, each tied to its result.
 */
import type { RawResult } from "../../backends/types.ts";
import { isCollectionDocUrl, urlIdentity } from "../../ranking/normalize-url.ts";
import { defaultFavicon } from "./page-media.ts";
import type { PageRead } from "./read.ts";

export interface SearchImageItem {
  url: string;
  description: string | null;
  result_url: string;
}

/** Most images in one answer. */
const MAX_IMAGES = 20;

export type Extras = Map<string, { image?: string; favicon?: string }>;

/** Thumbnails and icons the backends gave, by normalised result URL (first backend wins). */
export function backendExtras(perBackend: Readonly<Record<string, readonly RawResult[]>>): Extras {
  const out: Extras = new Map();
  for (const id of Object.keys(perBackend).sort()) {
    for (const r of perBackend[id]!) {
      const key = urlIdentity(r.url)?.key;
      if (!key || (!r.image && !r.favicon)) continue;
      const e = out.get(key) ?? {};
      e.image ??= r.image;
      e.favicon ??= r.favicon;
      out.set(key, e);
    }
  }
  return out;
}

const extraOf = (url: string, extras: Extras) => {
  const key = urlIdentity(url)?.key;
  return key ? extras.get(key) : undefined;
};

export function resultFavicon(url: string, page: PageRead | null | undefined, extras: Extras): string | null {
  if (page?.favicon) return page.favicon;
  if (isCollectionDocUrl(url)) return null;
  const given = extraOf(url, extras)?.favicon;
  if (given) return given;
  try {
    return defaultFavicon(url);
  } catch {
    return null;
  }
}

export function collectImages(
  results: readonly { url: string; title: string }[],
  pages: readonly (PageRead | null)[],
  extras: Extras,
  withDescriptions: boolean,
): SearchImageItem[] {
  const out: SearchImageItem[] = [];
  const seen = new Set<string>();
  const add = (url: string | undefined, description: string | null, resultUrl: string) => {
    if (!url || seen.has(url) || out.length >= MAX_IMAGES) return;
    seen.add(url);
    out.push({ url, description: withDescriptions ? description : null, result_url: resultUrl });
  };
  results.forEach((r) => add(extraOf(r.url, extras)?.image, r.title || null, r.url));
  results.forEach((r, i) => {
    for (const img of pages[i]?.images ?? []) add(img.url, img.description, r.url);
  });
  return out;
}
