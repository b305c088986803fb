/**
 * Page metadata from, in order of trust: JSON-LD, Open Graph / article:* / Twitter / Dublin Core
 * meta tags, microdata, then the document itself (`<title>`, `<html lang>`).
 */
import { normalizeSpace } from "./dom.ts";
import { findJsonLdType, jsonLdName, jsonLdString, mainJsonLdNode, parseLenient, readJsonLd } from "./json-ld.ts";
import { jsonLdBlocks, microdataItems, openGraph, structuredData } from "./structured-data.ts";
import type { PageMetadata } from "../ports/extract.ts";

/** What metadata needs from the document, gathered in one walk (each querySelector is a walk too). */
interface DocumentFacts {
  /** Lower-cased `name`/`property`/`itemprop`/`http-equiv` → first non-empty `content`. */
  meta: Map<string, string>;
  jsonLd: string[];
  title: string | null;
  /** First element with `itemprop` author / datePublished, `rel=author` link, `time[pubdate]`. */
  itempropAuthor: Element | null;
  itempropDate: Element | null;
  relAuthor: Element | null;
  pubdateTime: Element | null;
  /** Microdata items that are no other item's property, in page order. */
  items: Element[];
}

function gatherFacts(document: Document): DocumentFacts {
  const facts: DocumentFacts = {
    meta: new Map(),
    jsonLd: [],
    title: null,
    itempropAuthor: null,
    itempropDate: null,
    relAuthor: null,
    pubdateTime: null,
    items: [],
  };
  const root = document.documentElement;
  if (root) visit(root, facts);
  return facts;
}

/** Pre-order walk with an explicit stack: pages nested thousands deep must not overflow. */
function visit(root: Element, facts: DocumentFacts): void {
  const stack: Element[] = [root];
  while (stack.length) {
    const c = stack.pop()!;
    const tag = c.tagName;
    if (tag === "META") readMeta(c, facts.meta);
    else if (tag === "SCRIPT") {
      if ((c.getAttribute("type") ?? "").toLowerCase().includes("ld+json")) facts.jsonLd.push(c.textContent ?? "");
      continue;
    } else if (tag === "STYLE" || tag === "TEMPLATE") continue;
    else if (tag === "TITLE") {
      facts.title ??= c.textContent;
      continue;
    } else if (tag === "A" && !facts.relAuthor && /\bauthor\b/i.test(c.getAttribute("rel") ?? "")) facts.relAuthor = c;
    else if (tag === "TIME" && !facts.pubdateTime && c.hasAttribute("pubdate")) facts.pubdateTime = c;
    const itemprop = c.getAttribute("itemprop");
    if (!itemprop && c.hasAttribute("itemscope")) facts.items.push(c);
    if (itemprop) {
      if (!facts.itempropAuthor && /\bauthor\b/.test(itemprop)) facts.itempropAuthor = c;
      if (!facts.itempropDate && /\bdatePublished\b/.test(itemprop)) facts.itempropDate = c;
    }
    for (let child = c.lastElementChild; child; child = child.previousElementSibling) stack.push(child);
  }
}

function readMeta(meta: Element, map: Map<string, string>): void {
  const content = meta.getAttribute("content");
  if (!content || !content.trim()) return;
  for (const attr of ["property", "name", "itemprop", "http-equiv"]) {
    const key = meta.getAttribute(attr);
    if (!key) continue;
    // A `property` attribute may list several RDFa properties.
    for (const k of key.toLowerCase().split(/\s+/)) {
      if (k && !map.has(k)) map.set(k, normalizeSpace(content));
    }
  }
}

function first(...values: Array<string | null | undefined>): string | null {
  for (const v of values) {
    if (v && v.trim()) return normalizeSpace(decodeEntities(v));
  }
  return null;
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", hellip: "…", mdash: "—", ndash: "–",
  lsquo: "‘", rsquo: "’", ldquo: "“", rdquo: "”", laquo: "«", raquo: "»", copy: "©", reg: "®",
};

/**
 * Many CMSs HTML-escape strings before putting them in JSON-LD or `content` attributes, so values
 * arrive as "&#8216;Title&#8217;" after the parser has already decoded the markup once.
 */
export function decodeEntities(s: string): string {
  if (!s.includes("&")) return s;
  return s.replace(/&(#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,8});/gi, (m, code: string) => {
    if (code[0] === "#") {
      const n = code[1] === "x" || code[1] === "X" ? Number.parseInt(code.slice(2), 16) : Number(code.slice(1));
      return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : m;
    }
    return NAMED_ENTITIES[code.toLowerCase()] ?? m;
  });
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

function firstNonUrl(...values: Array<string | null | undefined>): string | null {
  return first(...values.filter((v) => !looksLikeUrl(v ?? null)));
}

/** "By Jane Doe" → "Jane Doe": bylines copied into meta tags keep their preposition. */
function stripBy(author: string | null): string | null {
  if (!author) return null;
  const stripped = author.replace(/^(by|von|por|par|di|door)\s+/i, "").trim();
  return stripped || null;
}

function looksLikeUrl(s: string | null): boolean {
  return !!s && /^https?:\/\//i.test(s);
}

function authorName(el: Element | null): string | null {
  if (!el) return null;
  const content = el.getAttribute("content");
  if (content) return content;
  const name = el.querySelector('[itemprop~="name"]');
  return (name ? name.getAttribute("content") ?? name.textContent : el.textContent) ?? null;
}

const TITLE_SEPARATOR = /\s+[|–—·•:/-]\s+/g;

function comparable(s: string): string {
  return s.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");
}

/** Removes a trailing or leading " | Site" segment when it names the site. */
function stripSiteName(title: string, siteName: string | null): string {
  if (!siteName) return title;
  const site = comparable(siteName);
  const isSite = (segment: string) => {
    const c = comparable(segment);
    if (c.length === 0) return false;
    // "TheHill" for "The Hill", "Digg" for "Digg.com", "IGN" for "IGN Entertainment".
    return c === site || (c.length >= 3 && site.startsWith(c)) || (c.startsWith(site) && c.length <= site.length + 4);
  };
  const separators = [...title.matchAll(TITLE_SEPARATOR)];
  if (separators.length === 0) return title;
  const last = separators[separators.length - 1]!;
  if (isSite(title.slice(last.index! + last[0].length))) return title.slice(0, last.index).trim();
  const firstSep = separators[0]!;
  if (isSite(title.slice(0, firstSep.index))) return title.slice(firstSep.index! + firstSep[0].length).trim();
  return title;
}

export function extractMetadata(document: Document): PageMetadata {
  const facts = gatherFacts(document);
  const meta = facts.meta;
  const nodes = readJsonLd(facts.jsonLd);
  const main = mainJsonLdNode(nodes);
  const publisher = main && typeof main.publisher === "object" ? jsonLdName(main.publisher) : null;
  const website = findJsonLdType(nodes, /^WebSite$/);
  const organization = findJsonLdType(nodes, /(Organization|NewsMediaOrganization)$/);

  const siteName = firstNonUrl(
    meta.get("og:site_name"),
    publisher,
    jsonLdString(website, "name"),
    jsonLdName(organization),
    meta.get("application-name"),
    meta.get("al:ios:app_name"),
  );

  const docTitle = facts.title;
  const rawTitle = first(
    jsonLdString(main, "headline"),
    meta.get("og:title"),
    meta.get("twitter:title"),
    meta.get("dc.title"),
    meta.get("headline"),
    docTitle,
  ) ?? first(document.querySelector("h1")?.textContent);
  const title = rawTitle ? stripSiteName(rawTitle, siteName) : null;

  const metaAuthor = [meta.get("author"), meta.get("article:author"), meta.get("dc.creator"), meta.get("parsely-author"), meta.get("sailthru.author")]
    .find((a) => a && !looksLikeUrl(a));
  const author = stripBy(first(
    main ? jsonLdName(main.author) : null,
    metaAuthor,
    authorName(facts.itempropAuthor),
    facts.relAuthor?.textContent,
  ));

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
      facts.itempropDate?.getAttribute("datetime"),
      facts.itempropDate?.getAttribute("content"),
      facts.pubdateTime?.getAttribute("datetime"),
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
    structured: structuredData(jsonLdBlocks(facts.jsonLd, parseLenient), microdataItems(facts.items), openGraph(meta)),
  };
}
