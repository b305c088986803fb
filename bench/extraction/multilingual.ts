/**
 * Loads the multilingual extraction set ($QUARRY_BENCH_DATA/extraction-multilingual, see
 * bench/data.ts and bench/README.md): pages decoded as `POST /v1/scrape` decodes a
 * body without a charset header (BOM, then the page's own `<meta>` declaration, then UTF-8), with
 * the `with`/`without` segments and a language per page.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { decodeHtml } from "../../core/extract/decode-html.ts";
import { benchSet } from "../data.ts";

export interface SegmentPage {
  id: string;
  url: string;
  html: string;
  with: string[];
  without: string[];
  /** Primary language subtag ("de"), or "?" when neither the page nor its URL says. */
  language: string;
  /** Where `language` came from. */
  languageSource: "declared" | "tld" | "none";
  /** `heldout` for a fixed quarter of the pages (by a hash of the file name), looked at only through totals. */
  split: "dev" | "heldout";
}

/** FNV-1a of the page's file name: a fixed split that does not depend on the set's order. */
export function splitOf(id: string): "dev" | "heldout" {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % 4 === 0 ? "heldout" : "dev";
}

export function multilingualDir(): string {
  return benchSet("extraction-multilingual");
}

export function loadSegmentPages(): SegmentPage[] {
  const dir = multilingualDir();
  const data = JSON.parse(readFileSync(join(dir, "evaldata.json"), "utf8")) as Record<
    string,
    { file: string; with: string[]; without: string[] }
  >;
  return Object.entries(data)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([url, entry]) => {
      const html = decodeHtml(gunzipSync(readFileSync(join(dir, "html", entry.file))), null);
      const { language, source } = pageLanguage(html, url);
      const id = entry.file.replace(/\.html\.gz$/, "");
      return { id, url, html, with: entry.with, without: entry.without, language, languageSource: source, split: splitOf(id) };
    });
}

const HTML_LANG = /<html\b[^>]*?\s(?:xml:)?lang\s*=\s*["']?\s*([a-zA-Z]{2,3})\b/i;
const META_LANG = /<meta\b[^>]*?(?:http-equiv\s*=\s*["']?content-language|name\s*=\s*["']?(?:dc\.)?language|property\s*=\s*["']?og:locale)["']?[^>]*>/gi;
const CONTENT = /\bcontent\s*=\s*["']?\s*([a-zA-Z]{2,3})\b/i;

/** Country-code TLDs whose sites mostly write one language; generic TLDs say nothing. */
const TLD_LANGUAGE: Record<string, string> = {
  de: "de", at: "de", ch: "de", fr: "fr", be: "fr", es: "es", mx: "es", ar: "es", it: "it", nl: "nl",
  pt: "pt", br: "pt", pl: "pl", cz: "cs", sk: "sk", ru: "ru", ua: "uk", se: "sv", dk: "da", no: "no",
  fi: "fi", gr: "el", tr: "tr", hu: "hu", ro: "ro", jp: "ja", cn: "zh", tw: "zh", kr: "ko", uk: "en",
  us: "en", au: "en", ie: "en", nz: "en", ca: "en", in: "en", il: "he", ir: "fa", vn: "vi", id: "id",
};

/** The page's declared language (`<html lang>`, then `<meta>` language/locale), else its URL's TLD. */
export function pageLanguage(html: string, url: string): { language: string; source: SegmentPage["languageSource"] } {
  const head = html.slice(0, 20000);
  const fromHtml = HTML_LANG.exec(head)?.[1];
  if (fromHtml) return { language: fromHtml.toLowerCase(), source: "declared" };
  for (const [tag] of head.matchAll(META_LANG)) {
    const v = CONTENT.exec(tag)?.[1];
    if (v) return { language: v.toLowerCase(), source: "declared" };
  }
  let tld = "";
  try {
    tld = new URL(url).hostname.split(".").pop() ?? "";
  } catch {
    tld = "";
  }
  const fromTld = TLD_LANGUAGE[tld];
  return fromTld ? { language: fromTld, source: "tld" } : { language: "?", source: "none" };
}
