/**
 * Bytes → HTML string, following the HTML standard's encoding sniffing in a reduced form
 * (https://html.spec.whatwg.org/multipage/parsing.html#determining-the-character-encoding):
 * a byte order mark, then the Content-Type header's charset, then a `<meta>` declaration in the
 * first bytes, then UTF-8. The BOM goes first as in browsers: it is proof of the encoding, while
 * headers are often a server default that disagrees with the bytes.
 * Decoding uses the standard TextDecoder, which knows windows-1252, Shift_JIS, GBK, EUC-KR, Big5…
 * on Node, Deno and Bun alike.
 */

/** How far into the document a `<meta charset>` is looked for (the standard says 1024 bytes). */
const PRESCAN_BYTES = 4096;

export function decodeHtml(bytes: Uint8Array, contentTypeHeader: string | null): string {
  const encoding =
    bomEncoding(bytes) ??
    usableLabel(charsetFromContentType(contentTypeHeader), false) ??
    usableLabel(charsetFromMeta(bytes), true) ??
    "utf-8";
  return new TextDecoder(encoding).decode(bytes);
}

function bomEncoding(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  return null;
}

/** `text/html; charset="Shift_JIS"` → `Shift_JIS`. */
export function charsetFromContentType(header: string | null): string | null {
  if (!header) return null;
  const m = /;\s*charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^;,\s]+))/i.exec(header);
  return m ? (m[1] ?? m[2] ?? m[3] ?? null) : null;
}

const META_TAG = /<meta\b[^>]*>/gi;
const CHARSET_ATTR = /\bcharset\s*=\s*["']?\s*([\w.:-]+)/i;
const HTTP_EQUIV = /\bhttp-equiv\s*=\s*["']?\s*content-type/i;
const CONTENT_ATTR = /\bcontent\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i;

/** `<meta charset=…>` or `<meta http-equiv=Content-Type content="…; charset=…">` near the top. */
export function charsetFromMeta(bytes: Uint8Array): string | null {
  // Every encoding a meta prescan can find is ASCII-compatible, so Latin-1 shows the tags as written.
  const head = new TextDecoder("windows-1252").decode(bytes.subarray(0, PRESCAN_BYTES));
  for (const [tag] of head.matchAll(META_TAG)) {
    if (HTTP_EQUIV.test(tag)) {
      const content = CONTENT_ATTR.exec(tag);
      const value = content ? (content[1] ?? content[2] ?? content[3] ?? "") : "";
      const fromContent = /charset\s*=\s*["']?([\w.:-]+)/i.exec(value);
      if (fromContent) return fromContent[1]!;
      continue;
    }
    const direct = CHARSET_ATTR.exec(tag);
    if (direct) return direct[1]!;
  }
  return null;
}

/** A label TextDecoder accepts, with the standard's substitutions; null when it rejects it. */
function usableLabel(label: string | null, inDocument: boolean): string | null {
  if (!label) return null;
  let l = label.trim().toLowerCase();
  // A declaration inside the document cannot truthfully say UTF-16: it was just read as ASCII.
  if (inDocument && l.startsWith("utf-16")) l = "utf-8";
  // The standard maps x-user-defined to a windows-1252-like decoder; runtimes may lack it.
  if (l === "x-user-defined") l = "windows-1252";
  try {
    return new TextDecoder(l).encoding;
  } catch {
    return null;
  }
}
