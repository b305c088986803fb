/**
 * HTML and PDF → text for agents: main-content extraction with metadata, text, markdown and links;
 * charset-aware decoding of fetched bytes; PDF text. Pure Web-standard TypeScript (no runtime APIs).
 */
export { extractContent } from "./extract-content.ts";
export { charsetFromContentType, charsetFromMeta, decodeHtml } from "./decode-html.ts";
export { pdfToText, type PdfText } from "./pdf-to-text.ts";
export { extractMetadata, normalizeLanguage, toIsoDate } from "./metadata.ts";
export { renderText } from "./to-text.ts";
export { renderMarkdown } from "./to-markdown.ts";
export { parseDocument } from "./dom.ts";
export type { ExtractedLink, ExtractOptions, ExtractResult, PageMetadata } from "../ports/extract.ts";
