/**
 * Which office document a fetched body is: by its content type, or, when the server names none
 * or a generic one (octet-stream, zip), by what the zip holds. OpenDocument files begin with
 * their `mimetype` entry, stored uncompressed; Office Open XML files are told apart by the part
 * every file of the kind has (word/document.xml, xl/workbook.xml, ppt/presentation.xml), whose
 * name the zip's headers carry in plain text.
 */
import type { DocumentKind } from "../../ports/extract.ts";

export type { DocumentKind };

export const DOCUMENT_TYPES: Record<string, DocumentKind> = {
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
  "application/vnd.oasis.opendocument.text": "odt",
  "application/vnd.oasis.opendocument.spreadsheet": "ods",
  "application/vnd.oasis.opendocument.presentation": "odp",
};

const GENERIC = new Set(["", "application/octet-stream", "application/zip", "application/x-zip-compressed", "application/x-zip", "binary/octet-stream", "application/download", "application/force-download"]);

const OOXML_PARTS: Array<[string, DocumentKind]> = [["word/document.xml", "docx"], ["xl/workbook.xml", "xlsx"], ["ppt/presentation.xml", "pptx"]];

function latin1(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return s;
}

const isZip = (b: Uint8Array) => b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04;

/** The document kind of a body, or null when it is none of them. */
export function documentKindOf(contentType: string | null, body: Uint8Array): DocumentKind | null {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  const named = DOCUMENT_TYPES[type];
  if (named) return named;
  if (!GENERIC.has(type) || !isZip(body)) return null;
  // An OpenDocument file: its first entry is `mimetype`, stored, naming the type (ODF 1.2 §3.3).
  const head = latin1(body.subarray(30, 30 + 120));
  const odf = /^mimetype(application\/vnd\.oasis\.opendocument\.(?:text|spreadsheet|presentation))/.exec(head);
  if (odf) return DOCUMENT_TYPES[odf[1]!] ?? null;
  // The central directory at the end names every part; a small file's local headers do too.
  const names = latin1(body.subarray(Math.max(0, body.length - 65_536))) + latin1(body.subarray(0, Math.min(body.length, 65_536)));
  for (const [part, kind] of OOXML_PARTS) if (names.includes(part)) return kind;
  return null;
}
