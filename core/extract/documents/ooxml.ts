/**
 * Office Open XML spreadsheets (XLSX) and presentations (PPTX) → HTML (ECMA-376 part 1). A
 * workbook's sheets, in its order, each a table under its name (shared and inline strings,
 * numbers and booleans as the file stores them; formulas as their cached value). A presentation's
 * slides, in its order, each a section: its title placeholder (or first text shape) as heading,
 * its other text shapes' paragraphs as lists (by indent level) or paragraphs, its tables as tables.
 */
import { Cells } from "./cells.ts";
import { all, byLocal, children, escapeHtml, local, parseXml } from "./xml.ts";
import type { Parts } from "./zip.ts";

/** `Target`s of a relationships part, by id, resolved against the part they belong to. */
function relations(parts: Parts, relsPath: string, baseDir: string): Map<string, string> {
  const xml = parts.get(relsPath);
  const out = new Map<string, string>();
  if (!xml) return out;
  for (const rel of all(parseXml(xml), "Relationship")) {
    const target = rel.getAttribute("Target") ?? "";
    const path = target.startsWith("/") ? target.slice(1) : new URL(target, `http://x/${baseDir}`).pathname.slice(1);
    out.set(rel.getAttribute("Id") ?? "", path);
  }
  return out;
}

export function coreTitle(parts: Parts): string | null {
  const core = parts.get("docProps/core.xml");
  return core ? parseXml(core).getElementsByTagName("dc:title")[0]?.textContent?.trim() || null : null;
}

/** Column index of a cell reference (`C7` → 2). */
function column(ref: string): number {
  let n = 0;
  for (const ch of ref.replace(/\d+$/, "").toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return Math.max(0, n - 1);
}

/** The text runs (`t`, `a:t`: spreadsheets write them unprefixed, DrawingML prefixed) under an element, joined. */
const textOf = (el: Element | undefined) => (el ? byLocal(el, "t").map((t) => t.textContent ?? "").join("") : "");

export function xlsxHtml(parts: Parts): string {
  const shared = (() => {
    const xml = parts.get("xl/sharedStrings.xml");
    return xml ? all(parseXml(xml), "si").map((si) => textOf(si)) : [];
  })();
  const workbook = parseXml(parts.get("xl/workbook.xml") ?? "<workbook/>");
  const rels = relations(parts, "xl/_rels/workbook.xml.rels", "xl/");
  const cells = new Cells();
  let html = "";
  for (const sheet of all(workbook, "sheet")) {
    const path = rels.get(sheet.getAttribute("r:id") ?? "");
    const xml = path && parts.get(path);
    if (!xml) continue;
    const rows: string[][] = [];
    for (const row of all(parseXml(xml), "row")) {
      const values: string[] = [];
      children(row).filter((c) => local(c) === "c").forEach((c, i) => {
        const at = c.getAttribute("r") ? column(c.getAttribute("r")!) : i;
        if (at > 500) return; // a cell far off to the side: not a table
        const t = c.getAttribute("t");
        const v = children(c).find((x) => local(x) === "v")?.textContent ?? "";
        const value = t === "s" ? shared[Number(v)] ?? "" : t === "inlineStr" ? textOf(children(c).find((x) => local(x) === "is")) : t === "b" ? (v === "1" ? "TRUE" : "FALSE") : v;
        values[at] = Cells.text(value);
      });
      const filled = Array.from(values, (x) => x ?? "");
      if (!filled.some(Boolean)) continue;
      if (!cells.take(filled.length)) break;
      rows.push(filled);
    }
    html += `<h2>${escapeHtml(sheet.getAttribute("name") ?? "Sheet")}</h2>${Cells.html(rows)}`;
  }
  return html + cells.note();
}

/** A text shape's paragraphs: one paragraph alone, several as a list nested by their level. */
function shapeText(body: Element): string {
  const paras = children(body).filter((c) => local(c) === "p").map((p) => ({
    level: Number(children(p).find((c) => local(c) === "pPr")?.getAttribute("lvl") ?? 0) || 0,
    text: escapeHtml(textOf(p).trim()),
  })).filter((p) => p.text);
  if (paras.length === 0) return "";
  if (paras.length === 1) return `<p>${paras[0]!.text}</p>`;
  let html = "";
  let depth = -1;
  for (const p of paras) {
    while (depth < p.level) html += "<ul>", depth++;
    while (depth > p.level) html += "</ul>", depth--;
    html += `<li>${p.text}</li>`;
  }
  while (depth-- >= 0) html += "</ul>";
  return html;
}

function slideTable(tbl: Element, cells: Cells): string {
  const rows = all(tbl, "a:tr").map((tr) => all(tr, "a:tc").map((tc) => escapeHtml(textOf(tc).trim())));
  return cells.take(rows.reduce((n, r) => n + r.length, 0)) ? Cells.html(rows) : "";
}

export function pptxHtml(parts: Parts): string {
  const presentation = parseXml(parts.get("ppt/presentation.xml") ?? "<presentation/>");
  const rels = relations(parts, "ppt/_rels/presentation.xml.rels", "ppt/");
  const cells = new Cells();
  let html = "";
  for (const id of all(presentation, "p:sldId")) {
    const path = rels.get(id.getAttribute("r:id") ?? "");
    const xml = path && parts.get(path);
    if (!xml) continue;
    const slide = parseXml(xml);
    const shapes = all(slide, "p:sp");
    const placeholder = (sp: Element) => all(sp, "p:ph")[0]?.getAttribute("type") ?? "";
    const titled = shapes.find((sp) => /^(title|ctrTitle)$/.test(placeholder(sp))) ?? shapes.find((sp) => textOf(sp).trim());
    let section = titled ? `<h2>${escapeHtml(textOf(titled).trim())}</h2>` : "";
    for (const sp of shapes) {
      if (sp === titled) continue;
      const body = children(sp).find((c) => local(c) === "txBody");
      if (body) section += shapeText(body);
    }
    for (const tbl of all(slide, "a:tbl")) section += slideTable(tbl, cells);
    html += `<section>${section}</section>`;
  }
  return html + cells.note();
}
