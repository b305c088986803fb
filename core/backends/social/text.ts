/**
 * Text helpers shared by the social parsers: HTML and Markdown bodies to plain text that keeps
 * paragraph breaks (the report splits sentences on them), one-line snippets and titles for
 * platforms whose posts have none, and epoch seconds to ISO.
 */
import { isWebUrl, plainText } from "../upstream.ts";

/** Tags that end a block of text: they become line breaks before the markup is dropped. */
const BLOCK = /<\/?(?:p|br|div|li|ul|ol|pre|blockquote|h[1-6]|tr|hr)\b[^>]*>/gi;

/** HTML fragment (HN, Stack Exchange, Mastodon) → plain text, one paragraph per line. */
export function htmlToText(html: string): string {
  return html
    .replace(/<span class="invisible">[^<]*<\/span>/gi, "") // Mastodon hides URL scheme and tail this way
    .replace(BLOCK, "\n")
    .split("\n")
    .map(plainText)
    .filter(Boolean)
    .join("\n");
}

/**
 * Markdown (Reddit self text, GitHub bodies, Lemmy) → plain text: links keep their label,
 * images and HTML comments go, emphasis and heading marks are dropped, code keeps its text.
 */
export function markdownToText(md: string): string {
  return md
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
    .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1")
    .replace(/^```.*$/gm, "")
    .replace(/^\s{0,3}(?:#{1,6}\s+|>\s?|[-*+]\s+(?=\S))/gm, "")
    .replace(/(\*\*|__|~~|`)/g, "")
    .replace(/(^|\s)[*_](\S[^*_\n]*?)[*_](?=\s|[.,;:!?]|$)/g, "$1$2")
    .replace(/&nbsp;|&#x200B;/gi, " ")
    .split("\n")
    .map((line) => line.replace(/\s+/g, " ").trim())
    .filter((line) => line && !/^[-*_=]{3,}$/.test(line))
    .join("\n");
}

/** Cuts `text` to at most `max` characters at a word boundary, adding an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/, "")}…`;
}

export const SNIPPET_CHARS = 280;

export function snippetOf(text: string): string {
  return clip(text, SNIPPET_CHARS);
}

/** A title for posts that have none (Bluesky, Mastodon): the first line, clipped. */
export function titleFrom(text: string, max = 100): string {
  return clip(text.split("\n", 1)[0] ?? "", max);
}

/** Unix seconds (integer or float) → `YYYY-MM-DDTHH:MM:SSZ`; null for anything else. */
export function isoFromEpochSeconds(value: unknown): string | null {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) return null;
  return new Date(Math.floor(value) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A usable outside link, or null (empty strings, relative paths, other schemes). */
export function webUrlOrNull(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed && isWebUrl(trimmed) ? trimmed : null;
}

/** Non-negative integer count, or undefined when the platform gave none. */
export function count(value: number | null | undefined): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? Math.max(0, Math.round(value)) : undefined;
}

/** Drops undefined metrics so `engagement` lists only what the platform reports. */
export function compact<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}
