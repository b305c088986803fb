/**
 * PDF → text through unpdf (a serverless build of Mozilla's PDF.js that runs on Node, Deno, Bun and
 * workers without native modules).
 */
import { extractText, getDocumentProxy, getMeta } from "unpdf";

export interface PdfText {
  /** Pages joined by blank lines. */
  text: string;
  title: string | null;
  pages: number;
}

/** PDF.js verbosity level "errors only": its warnings about damaged files would go to the console. */
const ERRORS_ONLY = 0;

export async function pdfToText(bytes: Uint8Array): Promise<PdfText> {
  if (!hasPdfHeader(bytes)) throw new Error("not a PDF: no %PDF- header");
  // PDF.js may transfer (detach) the buffer it is given; work on a copy so the caller's stays usable.
  const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: ERRORS_ONLY });
  try {
    const { totalPages, text } = await extractText(pdf, { mergePages: false });
    const { info, metadata } = await getMeta(pdf);
    const pages = (text as string[]).map((t) => t.replace(/[ \t]+\n/g, "\n").trim());
    return {
      text: pages.filter((t) => t.length > 0).join("\n\n"),
      title: pdfTitle(info, metadata),
      pages: totalPages,
    };
  } finally {
    await pdf.destroy();
  }
}

function pdfTitle(info: Record<string, unknown> | undefined, metadata: unknown): string | null {
  const fromInfo = info?.Title;
  if (typeof fromInfo === "string" && fromInfo.trim()) return fromInfo.trim();
  // XMP metadata (dc:title) when the Info dictionary has none.
  const xmp = metadata as { get?: (key: string) => unknown } | null | undefined;
  const fromXmp = typeof xmp?.get === "function" ? xmp.get("dc:title") : null;
  return typeof fromXmp === "string" && fromXmp.trim() ? fromXmp.trim() : null;
}

/** The header may follow up to 1024 bytes of junk (PDF 1.7, annex H). */
function hasPdfHeader(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length - 4, 1024);
  for (let i = 0; i < end; i++) {
    if (bytes[i] === 0x25 && bytes[i + 1] === 0x50 && bytes[i + 2] === 0x44 && bytes[i + 3] === 0x46 && bytes[i + 4] === 0x2d) {
      return true;
    }
  }
  return false;
}
