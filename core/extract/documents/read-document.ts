/**
 * Office documents (DOCX, XLSX, PPTX, ODT, ODS, ODP) → HTML, which the page pipeline then reads
 * as any page (markdown, text, links). DOCX goes through mammoth, which maps Word's structure to
 * semantic HTML (headings, lists, tables, links); the other formats are zipped XML, inflated with
 * fflate and read here (ooxml.ts, odf.ts). A document that cannot be read says why (DocumentError).
 */
import { documentLibraries } from "../../lazy.ts";
import type { DocumentKind } from "./kinds.ts";
import { odfHtml } from "./odf.ts";
import { coreTitle, pptxHtml, xlsxHtml } from "./ooxml.ts";
import { DocumentError, escapeHtml } from "./xml.ts";
import { MAX_INFLATED, readParts } from "./zip.ts";

export { DocumentError };

const page = (title: string | null, body: string) => `<!doctype html><html><head>${title ? `<title>${escapeHtml(title)}</title>` : ""}</head><body>${body}</body></html>`;

const XML_PART = /\.xml$|\.rels$/;

async function docxHtml(body: Uint8Array): Promise<string> {
  // The zip checked within the caps first: mammoth inflates what it is given.
  const parts = await readParts(body, (name) => XML_PART.test(name) && !name.startsWith("word/media/"));
  if (!parts.has("word/document.xml")) throw new DocumentError("it has no word/document.xml");
  const { mammoth } = await documentLibraries();
  // mammoth's server entry (Node, Deno and Bun all load it) reads `buffer`, which its zip library takes as any byte array.
  // Images are left out: a page's text and structure are what is read, and inlined images would bloat it.
  const result = await mammoth.convertToHtml({ buffer: body as never }, { convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: "" })) });
  return page(coreTitle(parts), result.value);
}

/** The document as an HTML page; throws DocumentError when it cannot be read (damaged, encrypted, past the caps). */
export async function documentHtml(kind: DocumentKind, body: Uint8Array): Promise<string> {
  try {
    if (kind === "docx") return await docxHtml(body);
    if (kind === "xlsx") {
      const parts = await readParts(body, (n) => n.startsWith("xl/") && XML_PART.test(n) && !n.startsWith("xl/media/") || n === "docProps/core.xml");
      if (!parts.has("xl/workbook.xml")) throw new DocumentError("it has no xl/workbook.xml");
      return page(coreTitle(parts), xlsxHtml(parts));
    }
    if (kind === "pptx") {
      const parts = await readParts(body, (n) => (n.startsWith("ppt/slides/") || n.startsWith("ppt/_rels/") || n === "ppt/presentation.xml" || n === "docProps/core.xml") && XML_PART.test(n));
      if (!parts.has("ppt/presentation.xml")) throw new DocumentError("it has no ppt/presentation.xml");
      return page(coreTitle(parts), pptxHtml(parts));
    }
    const parts = await readParts(body, (n) => n === "content.xml" || n === "meta.xml");
    const content = parts.get("content.xml");
    if (!content) throw new DocumentError("it has no content.xml (an encrypted OpenDocument file keeps it unreadable)");
    const { html, title } = odfHtml(content, parts.get("meta.xml"));
    return page(title, html);
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    throw new DocumentError(err instanceof Error ? err.message : String(err));
  }
}

export { MAX_INFLATED };
