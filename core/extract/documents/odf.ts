/**
 * OpenDocument (ODT, ODS, ODP) → HTML, from the archive's content.xml (ODF 1.2 part 1): headings
 * (`text:h` with their outline level), paragraphs, lists (nested), tables (a spreadsheet's sheets
 * are tables, each under its name), links, and a presentation's pages (each page's first frame
 * with text, or its title frame, as its heading). Repeated rows and cells are expanded only while
 * they hold something, within the caps of cells.ts.
 */
import { Cells as BaseCells } from "./cells.ts";

/** The cell budget, with the document's styles beside it (both go wherever the reading goes). */
type Cells = BaseCells & { styles: Styles };
const Cells = BaseCells;
import { children, escapeHtml, local, parseXml } from "./xml.ts";

const XLINK = "xlink:href";

/** What the document's automatic styles say: which paragraph styles are headings (and of which level), which list styles number. */
interface Styles {
  headings: Map<string, number>;
  numbered: Set<string>;
}

function stylesOf(doc: Document): Styles {
  const styles: Styles = { headings: new Map(), numbered: new Set() };
  for (const s of Array.from(doc.getElementsByTagName("style:style"))) {
    const parent = s.getAttribute("style:parent-style-name") ?? "";
    const level = parent === "Title" ? 1 : parent === "Subtitle" ? 2 : Number(/^Heading_20_(\d)$/.exec(parent)?.[1] ?? 0);
    if (level) styles.headings.set(s.getAttribute("style:name") ?? "", level);
  }
  for (const l of Array.from(doc.getElementsByTagName("text:list-style"))) {
    const first = children(l).find((c) => c.getAttribute("text:level") === "1");
    if (first && local(first) === "list-level-style-number") styles.numbered.add(l.getAttribute("style:name") ?? "");
  }
  return styles;
}

/** Inline content: text, spaces, tabs, line breaks, links and spans. */
function inline(el: Element): string {
  let out = "";
  for (const node of Array.from(el.childNodes)) {
    if (node.nodeType === 3) out += escapeHtml(node.textContent ?? "");
    else if (node.nodeType === 1) {
      const c = node as Element;
      const name = local(c);
      if (name === "s") out += " ".repeat(Math.min(100, Number(c.getAttribute("text:c") ?? 1) || 1));
      else if (name === "tab") out += "\t";
      else if (name === "line-break") out += "<br>";
      else if (name === "a") out += `<a href="${escapeHtml(c.getAttribute(XLINK) ?? "")}">${inline(c)}</a>`;
      else if (name === "note" || name === "annotation" || name === "bookmark" || name === "bookmark-start" || name === "bookmark-end") continue;
      else out += inline(c);
    }
  }
  return out;
}

function list(el: Element, cells: Cells, style: string | null): string {
  const items = children(el).filter((c) => local(c) === "list-item" || local(c) === "list-header");
  // A nested list without its own style keeps its parent list's.
  const own = el.getAttribute("text:style-name") ?? style;
  const tag = own && cells.styles.numbered.has(own) ? "ol" : "ul";
  return `<${tag}>${items.map((item) => `<li>${blocks(item, cells, own)}</li>`).join("")}</${tag}>`;
}

function table(el: Element, cells: Cells): string {
  const rows: string[][] = [];
  const rowsOf = (parent: Element): Element[] => children(parent).flatMap((c) => (local(c) === "table-row" ? [c] : /^table-(header-rows|rows|row-group)$/.test(local(c)) ? rowsOf(c) : []));
  for (const row of rowsOf(el)) {
    const values: string[] = [];
    for (const cell of children(row).filter((c) => local(c) === "table-cell" || local(c) === "covered-table-cell")) {
      const text = blocks(cell, cells).replace(/^<p>|<\/p>$/g, "");
      const repeat = Number(cell.getAttribute("table:number-columns-repeated") ?? 1) || 1;
      // An empty cell repeated a thousand times is the sheet's blank edge, not content.
      for (let i = 0; i < (text ? Math.min(repeat, 100) : Math.min(repeat, 1)); i++) values.push(text);
    }
    while (values.length && !values[values.length - 1]) values.pop();
    const repeat = Number(row.getAttribute("table:number-rows-repeated") ?? 1) || 1;
    if (!values.length) {
      if (rows.length) rows.push([]);
      continue;
    }
    for (let i = 0; i < Math.min(repeat, 100); i++) {
      if (!cells.take(values.length)) break;
      rows.push(values);
    }
  }
  while (rows.length && !rows[rows.length - 1]!.length) rows.pop();
  return Cells.html(rows);
}

/** Block content of an element: headings, paragraphs, lists, tables, frames. */
function blocks(el: Element, cells: Cells, listStyle: string | null = null): string {
  let out = "";
  for (const c of children(el)) {
    const name = local(c);
    const styled = name === "p" ? cells.styles.headings.get(c.getAttribute("text:style-name") ?? "") : undefined;
    if (name === "h" || styled) {
      const level = styled ?? Math.min(6, Math.max(1, Number(c.getAttribute("text:outline-level") ?? 1) || 1));
      out += `<h${level}>${inline(c)}</h${level}>`;
    } else if (name === "p") out += `<p>${inline(c)}</p>`;
    else if (name === "list") out += list(c, cells, listStyle);
    else if (name === "table") out += table(c, cells);
    else if (/^(section|text-box|frame|g|custom-shape|rect|index-body|table-of-content|list-item)$/.test(name)) out += blocks(c, cells, listStyle);
  }
  return out;
}

function page(el: Element, cells: Cells): string {
  const frames = children(el).filter((c) => /^(frame|custom-shape|rect|g)$/.test(local(c)));
  const titled = frames.find((f) => f.getAttribute("presentation:class") === "title") ?? frames.find((f) => blocks(f, cells).trim());
  const title = titled ? blocks(titled, cells).replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim() : "";
  const rest = frames.filter((f) => f !== titled).map((f) => blocks(f, cells)).join("");
  return `<section>${title ? `<h2>${escapeHtml(title)}</h2>` : ""}${rest}</section>`;
}

/** The HTML of an OpenDocument's content.xml, and its title from meta.xml when it has one. */
export function odfHtml(content: string, meta: string | undefined): { html: string; title: string | null } {
  const doc = parseXml(content);
  const cells = Object.assign(new Cells(), { styles: stylesOf(doc) });
  let html = "";
  const body = doc.getElementsByTagName("office:body")[0];
  for (const kind of body ? children(body) : []) {
    const name = local(kind);
    if (name === "spreadsheet") {
      for (const sheet of children(kind).filter((c) => local(c) === "table")) {
        html += `<h2>${escapeHtml(sheet.getAttribute("table:name") ?? "Sheet")}</h2>${table(sheet, cells)}`;
      }
    } else if (name === "presentation") {
      html += children(kind).filter((c) => local(c) === "page").map((p) => page(p, cells)).join("");
    } else html += blocks(kind, cells);
  }
  const title = meta ? (parseXml(meta).getElementsByTagName("dc:title")[0]?.textContent?.trim() || null) : null;
  return { html: html + cells.note(), title };
}
