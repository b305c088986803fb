import { describe, expect, it } from "vitest";
import { pdfToText } from "../../core/extract/mod.ts";

/**
 * A minimal valid PDF, written by hand: catalog, page tree, pages with one text object each in
 * Helvetica, an Info dictionary with a title, and an xref table whose offsets are computed.
 */
function minimalPdf(pages: string[], title: string): Uint8Array {
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 3 + i * 2);
  const fontId = 3 + pages.length * 2;
  const infoId = fontId + 1;
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>";
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${pages.length} >>`;
  pages.forEach((text, i) => {
    const pageId = pageIds[i]!;
    const stream = `BT /F1 18 Tf 72 720 Td (${text.replace(/([()\\])/g, "\\$1")}) Tj ET`;
    objects[pageId] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${pageId + 1} 0 R ` +
      `/Resources << /Font << /F1 ${fontId} 0 R >> >> >>`;
    objects[pageId + 1] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
  });
  objects[fontId] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
  objects[infoId] = `<< /Title (${title}) >>`;

  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = out.length; // ASCII only, so string length = byte offset
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xrefAt = out.length;
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) out += `${String(offsets[id]).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R /Info ${infoId} 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}

describe("pdfToText", () => {
  it("extracts the text, title and page count of a hand-written PDF", async () => {
    const bytes = minimalPdf(["Quarry reads PDF files (first page).", "Second page says goodbye."], "Quarry test PDF");
    const result = await pdfToText(bytes);
    expect(result.pages).toBe(2);
    expect(result.title).toBe("Quarry test PDF");
    expect(result.text).toContain("Quarry reads PDF files (first page).");
    expect(result.text).toContain("Second page says goodbye.");
    expect(result.text.indexOf("first page")).toBeLessThan(result.text.indexOf("Second page"));
  });

  it("leaves the caller's bytes usable", async () => {
    const bytes = minimalPdf(["Hello"], "T");
    await pdfToText(bytes);
    expect(bytes.byteLength).toBeGreaterThan(0);
    expect((await pdfToText(bytes)).text).toContain("Hello");
  });

  it("rejects bytes that are not a PDF", async () => {
    await expect(pdfToText(new TextEncoder().encode("<html>not a pdf</html>"))).rejects.toThrow();
  });
});
