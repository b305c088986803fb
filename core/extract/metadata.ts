/**
 * Page metadata from, in order of trust: JSON-LD, Open Graph / article:* / Twitter / Dublin Core
 * meta tags, microdata, then the document itself (`<title>`, `<html lang>`).
 */
import { normalizeSpace } from "./dom.ts";
import { findJsonLdType, jsonLdName, jsonLdString, mainJsonLdNode, readJsonLd } from "./json-ld.ts";
import type { PageMetadata } from "./types.ts";

/** Lower-cased `name`/`property`/`itemprop`/`http-equiv` → first non-empty `content`. */
function readMetaTags(document: Document): Map<string, string> {
  const map = new Map<string, string>();
  for (const meta of Array.from(document.getElementsByTagName("meta"))) {
    const content = meta.getAttribute("content");
    if (!content || !content.trim()) continue;
    for (const attr of ["property", "name", "itemprop", "http-equiv"]) {
      const key = meta.getAttribute(attr);
      if (!key) continue;
      // A `property` attribute may list several RDFa properties.
      for (const k of key.toLowerCase().split(/\s+/)) {
        if (k && !map.has(k)) map.set(k, normalizeSpace(content));
      }
    }
  }
  return map;
}

function first(...values: Array<string | null | undefined>): string | null {
  for (const v of values) {
    if (v && v.trim()) return normalizeSpace(v);
  }
  return null;
}

const ISO_NO_ZONE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Normalises a date string to ISO 8601 UTC. Dates without a zone are read as UTC so the result does
 * not depend on the machine's time zone.
 */
export function toIsoDate(value: string | null): string | null {
  if (!value) return null;
  let v = value.trim();
  if (ISO_NO_ZONE.test(v)) v = `${v.replace(" ", "T")}Z`;
  else if (DATE_ONLY.test(v)) v = `${v}T00:00:00Z`;
  // "+0000" offsets without a colon are not accepted everywhere.
  v = v.replace(/([+-]\d{2})(\d{2})$/, "$1:$2");
  // Non-ISO strings ("Nov 19, 2019 10:04 AM") are read in local time by Date.parse; pin them to UTC.
  let ms = /^\d{4}-\d{2}-\d{2}T/.test(v) ? Date.parse(v) : Date.parse(`${v} UTC`);
  if (Number.isNaN(ms)) ms = Date.parse(v);
  if (Number.isNaN(ms)) return null;
  const year = new Date(ms).getUTCFullYear();
  return year >= 1990 && year <= 2200 ? new Date(ms).toISOString() : null;
}

/** "en_US" → "en-US"; keeps only plausible BCP 47 tags. */
export function normalizeLanguage(value: string | null): string | null {
  if (!value) return null;
  const tag = value.trim().split(/[,;\s]/)[0]!.replace(/_/g, "-");
  return /^[a-z]{2,3}(-[a-z0-9]{2,8})*$/i.test(tag) ? tag : null;
}

function looksLikeUrl(s: string | null): boolean {
  return !!s && /^https?:\/\//i.test(s);
}

function attrOf(document: Document, selector: string, attr: string): string | null {
  const el = document.querySelector(selector);
  if (!el) return null;
  return attr === "text" ? el.textContent : el.getAttribute(attr);
}

/** Removes a trailing/leading " | Site" from a `<title>` when the site name is known. */
function stripSiteName(title: string, siteName: string | null): string {
  if (!siteName) return title;
  const parts = title.split(/\s+[|–—·•:-]\s+/);
  if (parts.length < 2) return title;
  const site = siteName.toLowerCase();
  const kept = parts.filter((p) => p.toLowerCase() !== site);
  return kept.length && kept.length < parts.length ? kept.join(" - ") : title;
}

export function extractMetadata(document: Document): PageMetadata {
  const meta = readMetaTags(document);
  const nodes = readJsonLd(document);
  const main = mainJsonLdNode(nodes);
  const publisher = main && typeof main.publisher === "object" ? jsonLdName(main.publisher) : null;
  const website = findJsonLdType(nodes, /^WebSite$/);
  const organization = findJsonLdType(nodes, /(Organization|NewsMediaOrganization)$/);

  const siteName = first(
    meta.get("og:site_name"),
    publisher,
    jsonLdString(website, "name"),
    jsonLdName(organization),
    meta.get("application-name"),
    meta.get("al:ios:app_name"),
  );

  const docTitle = document.querySelector("title")?.textContent ?? null;
  const title = first(
    jsonLdString(main, "headline"),
    meta.get("og:title"),
    meta.get("twitter:title"),
    meta.get("dc.title"),
    meta.get("headline"),
    docTitle ? stripSiteName(normalizeSpace(docTitle), siteName) : null,
    document.querySelector("h1")?.textContent,
  );

  const metaAuthor = [meta.get("author"), meta.get("article:author"), meta.get("dc.creator"), meta.get("parsely-author"), meta.get("sailthru.author")]
    .find((a) => a && !looksLikeUrl(a));
  const author = first(
    main ? jsonLdName(main.author) : null,
    metaAuthor,
    attrOf(document, '[itemprop~="author"] [itemprop~="name"]', "text"),
    attrOf(document, 'a[rel~="author"]', "text"),
  );

  const published = toIsoDate(
    first(
      jsonLdString(main, "datePublished"),
      meta.get("article:published_time"),
      meta.get("og:published_time"),
      meta.get("datepublished"),
      meta.get("publishdate"),
      meta.get("pubdate"),
      meta.get("parsely-pub-date"),
      meta.get("sailthru.date"),
      meta.get("dc.date.issued"),
      meta.get("dc.date"),
      meta.get("dcterms.created"),
      meta.get("date"),
      attrOf(document, '[itemprop~="datePublished"]', "datetime"),
      attrOf(document, '[itemprop~="datePublished"]', "content"),
      attrOf(document, "time[pubdate]", "datetime"),
      jsonLdString(main, "dateCreated"),
    ),
  );

  const language = normalizeLanguage(
    first(
      document.documentElement?.getAttribute("lang"),
      document.documentElement?.getAttribute("xml:lang"),
      meta.get("content-language"),
      meta.get("dc.language"),
      jsonLdString(main, "inLanguage"),
      meta.get("og:locale"),
    ),
  );

  const description = first(
    meta.get("description"),
    meta.get("og:description"),
    meta.get("twitter:description"),
    jsonLdString(main, "description"),
    meta.get("dc.description"),
  );

  return {
    title,
    description,
    author,
    published_at: published,
    language,
    site_name: siteName,
    articleBody: jsonLdString(main, "articleBody"),
  };
}
