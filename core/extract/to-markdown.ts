/**
 * DOM → Markdown for agents: ATX headings, `-` lists, fenced code with the language kept, GFM pipe
 * tables, inline links. Turndown works on the linkedom element directly (it clones it), so the HTML
 * is never re-parsed by another DOM implementation.
 */
import type TurndownService from "turndown";
import { lib } from "../lazy.ts";

let service: TurndownService | null = null;

export function renderMarkdown(root: Element): string {
  service ??= createService();
  return service
    .turndown(root as unknown as HTMLElement)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function createService(): TurndownService {
  const td = new (lib("turndown"))({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "_",
    strongDelimiter: "**",
    hr: "---",
  });
  td.remove(["script", "style", "noscript", "iframe", "form", "button", "select", "input", "textarea"] as never);

  // Turndown tries the most recently added rule first, so the general table fallback comes first.
  // Layout tables (one column, or tables holding tables) are rendered as their blocks.
  td.addRule("layoutTable", {
    filter: (node) => ["TABLE", "THEAD", "TBODY", "TFOOT", "TR", "TH", "TD"].includes(node.nodeName),
    replacement: (content) => `\n\n${content}\n\n`,
  });

  // List items with a single space after the marker (turndown pads to four columns): fewer tokens.
  td.addRule("listItem", {
    filter: "li",
    replacement: (content, node) => {
      const parent = node.parentNode as Element | null;
      let prefix = "- ";
      if (parent?.nodeName === "OL") {
        const start = Number(parent.getAttribute("start")) || 1;
        prefix = `${start + indexAmongElements(node)}. `;
      }
      const body = content.replace(/^\n+/, "").replace(/\n+$/, "\n").replace(/\n/gm, `\n${" ".repeat(prefix.length)}`);
      return prefix + body.trimEnd() + (node.nextSibling ? "\n" : "");
    },
  });

  // Images: only those that say what they show; data: URIs and spacer images are noise to a reader.
  td.addRule("img", {
    filter: "img",
    replacement: (_content, node) => {
      const alt = (node.getAttribute("alt") ?? "").replace(/\s+/g, " ").trim();
      const src = node.getAttribute("src") ?? "";
      if (!alt || !/^https?:/i.test(src)) return "";
      return `![${alt.replace(/[[\]]/g, "")}](${src})`;
    },
  });

  td.addRule("tableCell", {
    filter: (node) => (node.nodeName === "TH" || node.nodeName === "TD") && isDataTable(node),
    replacement: (content, node) => {
      const cell = content.replace(/\s*\n+\s*/g, " ").replace(/\|/g, "\\|").trim();
      const first = !previousElement(node);
      // Spanned columns get empty cells so every row has as many pipes as the separator.
      const span = Math.max(1, Number(node.getAttribute("colspan")) || 1);
      return `${first ? "| " : " "}${cell} |${" |".repeat(span - 1)}`;
    },
  });

  td.addRule("tableRow", {
    filter: (node) => node.nodeName === "TR" && isDataTable(node),
    replacement: (content, node) => {
      let out = `\n${content}`;
      if (isFirstRow(node)) {
        const cols = cellCount(node);
        out += `\n|${" --- |".repeat(cols)}`;
      }
      return out;
    },
  });

  td.addRule("tableSection", {
    filter: (node) => ["THEAD", "TBODY", "TFOOT"].includes(node.nodeName) && isDataTable(node),
    replacement: (content) => content,
  });

  td.addRule("table", {
    filter: (node) => node.nodeName === "TABLE" && isDataTable(node),
    replacement: (content, node) => {
      const caption = node.querySelector("caption")?.textContent?.replace(/\s+/g, " ").trim();
      return `\n\n${caption ? `${caption}\n\n` : ""}${content.trim()}\n\n`;
    },
  });
  td.addRule("tableCaption", { filter: "caption", replacement: () => "" });

  return td;
}

function tableOf(start: Element): Element | null {
  let el: Element | null = start;
  while (el && el.nodeName !== "TABLE") el = el.parentElement;
  return el;
}

const dataTableCache = new WeakMap<Element, boolean>();

/** A table with at least two columns and no nested tables; anything else is layout. */
function isDataTable(el: Element): boolean {
  const table = tableOf(el);
  if (!table) return false;
  let known = dataTableCache.get(table);
  if (known === undefined) {
    const firstRow = table.querySelector("tr");
    known = !!firstRow && cellCount(firstRow) >= 2 && !table.querySelector("table");
    dataTableCache.set(table, known);
  }
  return known;
}

function cellCount(row: Element): number {
  let n = 0;
  for (let c = row.firstElementChild; c; c = c.nextElementSibling) {
    if (c.nodeName === "TH" || c.nodeName === "TD") n += Math.max(1, Number(c.getAttribute("colspan")) || 1);
  }
  return n;
}

function previousElement(el: Element): Element | null {
  return el.previousElementSibling;
}

function isFirstRow(row: Element): boolean {
  const table = tableOf(row);
  return !!table && table.querySelector("tr") === row;
}

function indexAmongElements(el: Element): number {
  let i = 0;
  for (let c = el.previousElementSibling; c; c = c.previousElementSibling) i++;
  return i;
}
