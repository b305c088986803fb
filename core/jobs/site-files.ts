/**
 * The files a site publishes about itself: robots.txt (through `robots-parser`) and sitemaps
 * (urlset and sitemap index, plain or gzipped, https://www.sitemaps.org/protocol.html). Every
 * fetch goes through the guarded page port, so a sitemap pointing at a private address is
 * refused like any other URL. Gzip is undone with the Web standard DecompressionStream, capped.
 */
import robotsParser from "robots-parser";
import type { PagePort } from "../ports.ts";
import { siteUnreachable } from "../net/fetch-errors.ts";
import { readAllCapped } from "../net/read-capped.ts";

export const USER_AGENT_TOKEN = "Quarry";
const MAX_SITEMAP_BYTES = 50 * 1024 * 1024; // the protocol's own cap for one sitemap, uncompressed
const MAX_SITEMAPS = 50;

export interface Robots {
  allowed(url: string): boolean;
  /**
   * Set when everything is disallowed because robots.txt could not be read (5xx, network): the
   * pages it keeps out are reported `robots_unreachable`, not `robots_disallowed`, since the site
   * disallowed nothing (it was down, or refused the connection).
   */
  unreachable?: true;
  /**
   * How its fetch went, for the host's streak of failures to reach it (site-streaks.ts): `true`
   * an HTTP answer of any status, `false` no answer at all (siteUnreachable: refused, reset, DNS,
   * TLS, timeout); unset for other failures (a body too large, an address refused).
   */
  reached?: boolean;
  /** The turn its fetch began among the job pages' requests (SiteStreaks.begin), set by RobotsCache. */
  asked?: number;
  /** Seconds between requests the site asks for, if any. */
  crawlDelay(): number | undefined;
  sitemaps(): string[];
}

const allowAll: Robots = { allowed: () => true, crawlDelay: () => undefined, sitemaps: () => [] };
const disallowAll: Robots = { allowed: () => false, crawlDelay: () => undefined, sitemaps: () => [], unreachable: true };

/** The failure or skip reason of a URL these rules keep out. */
export const robotsReason = (robots: Robots) => (robots.unreachable ? "robots_unreachable" : "robots_disallowed");

/**
 * robots.txt of the origin. A missing file (4xx) allows everything, as RFC 9309 §2.3.1.3 says;
 * a server error or an unreachable one (5xx, network) disallows everything (§2.3.1.4).
 */
export async function fetchRobots(pages: PagePort, origin: string, timeoutMs = 10_000): Promise<Robots> {
  const url = `${origin}/robots.txt`;
  let text: string;
  try {
    const page = await pages.fetchPage(url, { timeoutMs, maxBytes: 512 * 1024 });
    // A fresh object per fetch: a job counts each fetch's outcome once (SiteStreaks.robots).
    if (page.status >= 400 && page.status < 500) return { ...allowAll, reached: true };
    if (page.status >= 500) return { ...disallowAll, reached: true };
    text = new TextDecoder().decode(page.body);
  } catch (err) {
    return siteUnreachable(err) ? { ...disallowAll, reached: false } : { ...disallowAll };
  }
  const robots = robotsParser(url, text);
  return {
    reached: true,
    allowed: (u) => robots.isAllowed(u, USER_AGENT_TOKEN) !== false,
    crawlDelay: () => robots.getCrawlDelay(USER_AGENT_TOKEN),
    sitemaps: () => robots.getSitemaps(),
  };
}

async function gunzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream("gzip"));
  return readAllCapped(stream, MAX_SITEMAP_BYTES, () => new Error("sitemap larger than 50 MB uncompressed"));
}

function decodeEntities(s: string): string {
  return s.replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").trim();
}

/** The <loc>s of a sitemap, split into pages (urlset) and further sitemaps (sitemapindex). */
export function parseSitemap(xml: string): { pages: string[]; sitemaps: string[] } {
  const isIndex = /<sitemapindex[\s>]/i.test(xml);
  const locs = [...xml.matchAll(/<loc>\s*(?:<!\[CDATA\[)?([\s\S]*?)(?:\]\]>)?\s*<\/loc>/gi)].map((m) => decodeEntities(m[1]));
  return isIndex ? { pages: [], sitemaps: locs } : { pages: locs, sitemaps: [] };
}

export interface SitemapResult {
  pages: string[];
  /** Sitemaps read, and those that could not be read (with why). */
  read: string[];
  failed: Array<{ url: string; error: string }>;
}

/**
 * Reads sitemaps breadth-first from `roots`, following indexes, until `maxPages` page URLs are
 * found or 50 sitemaps are read. Only sitemaps on `sameSite` hosts are followed.
 */
export async function readSitemaps(
  pages: PagePort,
  roots: string[],
  opts: { maxPages: number; timeoutMs?: number; sameSite: (url: string) => boolean; deadline?: number },
): Promise<SitemapResult> {
  const queue = [...new Set(roots)];
  const seen = new Set(queue);
  const out: SitemapResult = { pages: [], read: [], failed: [] };
  while (queue.length && out.read.length + out.failed.length < MAX_SITEMAPS && out.pages.length < opts.maxPages) {
    const url = queue.shift()!;
    // `deadline` (performance.now() time) bounds the whole read: each fetch gets what is left of it.
    const left = opts.deadline === undefined ? Infinity : Math.round(opts.deadline - performance.now());
    if (left <= 0) {
      out.failed.push({ url, error: "not read: the request's deadline had passed" });
      break;
    }
    try {
      const page = await pages.fetchPage(url, { timeoutMs: Math.min(opts.timeoutMs ?? 10_000, left), maxBytes: MAX_SITEMAP_BYTES });
      if (page.status >= 400) {
        out.failed.push({ url, error: `http_${page.status}` });
        continue;
      }
      let body = page.body;
      if (body[0] === 0x1f && body[1] === 0x8b) body = await gunzip(body);
      const { pages: found, sitemaps } = parseSitemap(new TextDecoder().decode(body));
      out.read.push(url);
      for (const p of found) if (out.pages.length < opts.maxPages) out.pages.push(p);
      for (const s of sitemaps) {
        if (!seen.has(s) && URL.canParse(s) && opts.sameSite(s)) {
          seen.add(s);
          queue.push(s);
        }
      }
    } catch (err) {
      out.failed.push({ url, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return out;
}

/** Every `<a href>` of a page with its text, resolved against the page's URL (and its <base>). */
export function pageLinks(html: string, pageUrl: string): Array<{ url: string; text: string }> {
  const baseHref = /<base\b[^>]*\bhref\s*=\s*["']?([^"'\s>]+)/i.exec(html)?.[1];
  let base = pageUrl;
  if (baseHref && URL.canParse(baseHref, pageUrl)) base = new URL(baseHref, pageUrl).href;
  const out: Array<{ url: string; text: string }> = [];
  for (const m of html.matchAll(/<a\b([^>]*)>([\s\S]{0,2000}?)<\/a\s*>/gi)) {
    const href = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(m[1]);
    if (!href) continue;
    const raw = decodeEntities(href[1] ?? href[2] ?? href[3] ?? "");
    if (!raw || /^(javascript|mailto|tel|data):/i.test(raw)) continue;
    let url: string;
    try {
      url = new URL(raw, base).href;
    } catch {
      continue;
    }
    const text = decodeEntities(m[2].replace(/<[^>]*>/g, " ").replace(/\s+/g, " "));
    out.push({ url, text });
  }
  return out;
}
