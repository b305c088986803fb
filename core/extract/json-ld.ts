/**
 * JSON-LD (schema.org) blocks: the most reliable metadata a page has when present. Pages nest the
 * article in arrays, in `@graph`, or under `mainEntity`; some embed raw control characters that
 * strict JSON rejects, which we tolerate.
 */

export type JsonLdNode = Record<string, unknown>;

const ARTICLE_TYPES = /(Article|Posting|Report|Review|Recipe|HowTo|Story)$/;
const PAGE_TYPES = /(WebPage|ItemPage|AboutPage|ProfilePage|QAPage|FAQPage)$/;

/** Parses the text of each `<script type="application/ld+json">`; broken blocks are skipped. */
export function readJsonLd(blocks: string[]): JsonLdNode[] {
  const nodes: JsonLdNode[] = [];
  for (const raw of blocks) {
    const parsed = parseLenient(raw);
    if (parsed !== undefined) collect(parsed, nodes, 0);
  }
  return nodes;
}

/** One block parsed, tolerating comments, CDATA and raw control characters; undefined when broken. */
export function parseLenient(raw: string): unknown {
  const text = raw.trim().replace(/^<!--|-->$/g, "").replace(/^\s*\/\/\s*<!\[CDATA\[|\/\/\s*\]\]>\s*$/g, "");
  try {
    return JSON.parse(text);
  } catch {
    try {
      // Literal newlines/tabs inside strings are the common breakage; outside strings they are whitespace.
      return JSON.parse(text.replace(/[\u0000-\u001f]+/g, " "));
    } catch {
      return undefined;
    }
  }
}

function collect(value: unknown, out: JsonLdNode[], depth: number): void {
  if (depth > 4 || value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const v of value) collect(v, out, depth + 1);
    return;
  }
  const node = value as JsonLdNode;
  if (node["@type"] !== undefined) out.push(node);
  if (node["@graph"] !== undefined) collect(node["@graph"], out, depth + 1);
  if (node.mainEntity !== undefined) collect(node.mainEntity, out, depth + 1);
  if (node.mainEntityOfPage !== undefined && typeof node.mainEntityOfPage === "object") {
    collect(node.mainEntityOfPage, out, depth + 1);
  }
}

function types(item: JsonLdNode): string[] {
  const t = item["@type"];
  if (typeof t === "string") return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === "string");
  return [];
}

/** The node describing the page's main item: an Article-like type first, then a WebPage. */
export function mainJsonLdNode(nodes: JsonLdNode[]): JsonLdNode | null {
  const article = nodes.find((n) => types(n).some((t) => ARTICLE_TYPES.test(t)));
  if (article) return article;
  return nodes.find((n) => types(n).some((t) => PAGE_TYPES.test(t))) ?? null;
}

export function findJsonLdType(nodes: JsonLdNode[], pattern: RegExp): JsonLdNode | null {
  return nodes.find((n) => types(n).some((t) => pattern.test(t))) ?? null;
}

/** A string, or the `name` of an object, or names of an array joined with ", ". */
export function jsonLdName(value: unknown): string | null {
  if (typeof value === "string") return value.trim() || null;
  if (Array.isArray(value)) {
    const names = value.map(jsonLdName).filter((n): n is string => !!n);
    return names.length ? [...new Set(names)].join(", ") : null;
  }
  if (value && typeof value === "object") {
    const name = (value as JsonLdNode).name;
    return typeof name === "string" ? name.trim() || null : null;
  }
  return null;
}

export function jsonLdString(item: JsonLdNode | null, key: string): string | null {
  if (!item) return null;
  const v = item[key];
  if (typeof v === "string") return v.trim() || null;
  if (Array.isArray(v) && typeof v[0] === "string") return v[0].trim() || null;
  return null;
}
