/**
 * Reading one result's page for search, through the guarded page port like every page read:
 * the tier's query-focused excerpt, and what the request's options ask of the page — whole
 * content as markdown or text, query-relevant chunks, the site's icon and its images. A page
 * that fails, is not HTML or misses the deadline gives null, and the source registry learns it;
 * why goes into `unread` (url → reason), which the answer's meta.pages reports.
 */
import { truncateToTokens } from "../../budget/tokens.ts";
import { describeBlock, detectBlock } from "../../net/blocks.ts";
import { decodeHtml } from "../../extract/decode-html.ts";
import { extractPage } from "../../extract/run.ts";
import type { Rendering } from "../../ports/extract.ts";
import type { Ports } from "../../ports.ts";
import { queryChunks, queryExcerpt } from "../../answers/excerpt.ts";
import { pageMedia, type PageImage } from "./page-media.ts";

/** Most tokens of a page's whole content in `raw_content` (tier full and `include_raw_content`). */
export const RAW_CONTENT_TOKENS = 4000;

export interface ReadWants {
  query: string;
  /** Excerpt budget in tokens; 0 for none. */
  excerptTokens: number;
  raw: "markdown" | "text" | null;
  chunks: number | null;
  /** Icon and images of the page. */
  media: boolean;
}

export interface PageRead {
  excerpt: string | null;
  raw: string | null;
  chunks: string[];
  /** The page's text, for the answer. */
  text: string;
  published_at: string | null;
  favicon: string | null;
  images: PageImage[];
}

export async function readPage(ports: Ports, url: string, wants: ReadWants, deadline: number, unread?: Map<string, string>): Promise<PageRead | null> {
  const unreadBecause = (reason: string) => {
    unread?.set(url, reason);
    return null;
  };
  const left = deadline - ports.clock.now();
  if (left < 200) return unreadBecause("no time left before the deadline");
  const host = new URL(url).hostname;
  try {
    const page = await ports.pages.fetchPage(url, { timeoutMs: Math.min(left, 8_000) });
    const type = (page.contentType ?? "").toLowerCase();
    if (page.status >= 400 || !(type.includes("html") || type === "")) {
      await ports.sources.record(host, { fetched: true, ok: false }).catch(() => {});
      const block = detectBlock(page.status, page.headers, page.body);
      return unreadBecause(block ? `the page answered with a bot wall (${describeBlock(block)})` : page.status >= 400 ? `the page answered HTTP ${page.status}` : `not an HTML page (${type})`);
    }
    const formats: Rendering[] = ["text"];
    if (wants.media) formats.push("html");
    if (wants.raw === "markdown") formats.push("markdown");
    const content = await extractPage(ports, { body: page.body, contentType: page.contentType, url: page.finalUrl, onlyMainContent: true, formats });
    await ports.sources.record(host, { fetched: true, ok: true }).catch(() => {});
    // Icons and images are read from the page's head and its kept content: decoded here only when asked for.
    const media = wants.media ? pageMedia(decodeHtml(page.body, page.contentType), content.html, page.finalUrl) : null;
    const whole = wants.raw === "text" ? content.text : content.markdown;
    return {
      excerpt: wants.excerptTokens > 0 ? queryExcerpt(content.text, wants.query, Math.min(wants.excerptTokens, 800)) || null : null,
      raw: wants.raw ? truncateToTokens(whole, RAW_CONTENT_TOKENS) : null,
      chunks: wants.chunks ? queryChunks(content.text, wants.query, wants.chunks) : [],
      text: content.text,
      // Written as the backends write dates: whole seconds, no ".000".
      published_at: content.published_at?.replace(/\.000Z$/, "Z") ?? null,
      favicon: media?.favicon ?? null,
      images: media?.images ?? [],
    };
  } catch (err) {
    await ports.sources.record(host, { fetched: true, ok: false }).catch(() => {});
    return unreadBecause(err instanceof Error ? err.message : String(err));
  }
}

/** Settles with null at the deadline, so one slow page never delays the answer. */
export function byDeadline<T>(p: Promise<T | null>, ports: Ports, deadline: number): Promise<T | null> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(null), Math.max(0, deadline - ports.clock.now()));
    p.then((v) => resolve(v), () => resolve(null)).finally(() => clearTimeout(t));
  });
}
