/**
 * Tables read from spreadsheets and documents, bounded: at most 200,000 cells in one document
 * (a sheet of 10,000 rows of 20 columns), with a note saying where the reading stopped.
 */
import { escapeHtml } from "./xml.ts";

export const MAX_CELLS = 200_000;

export class Cells {
  private used = 0;
  cut = false;

  /** Room for `n` more cells; false (and the cut noted) once the document has had its share. */
  take(n: number): boolean {
    if (this.used + n > MAX_CELLS) {
      this.cut = true;
      return false;
    }
    this.used += n;
    return true;
  }

  /** A paragraph saying the tables were cut, or nothing. */
  note(): string {
    return this.cut ? `<p>[Quarry read the first ${MAX_CELLS} cells of this document; the rest is left out.]</p>` : "";
  }

  /** Rows as an HTML table, the first row as its header; cells are HTML already. */
  static html(rows: string[][]): string {
    if (!rows.length) return "";
    const width = Math.max(...rows.map((r) => r.length));
    const row = (r: string[], tag: "th" | "td") => `<tr>${Array.from({ length: width }, (_, i) => `<${tag}>${r[i] ?? ""}</${tag}>`).join("")}</tr>`;
    return `<table><thead>${row(rows[0]!, "th")}</thead><tbody>${rows.slice(1).map((r) => row(r, "td")).join("")}</tbody></table>`;
  }

  static text(s: string): string {
    return escapeHtml(s).replace(/\n/g, "<br>");
  }
}
