/**
 * The parts of a zipped document, inflated with fflate within caps: a zip can claim little and
 * inflate to gigabytes, so each part's declared size is checked before it is inflated, and the
 * parts read are bounded in number and in total.
 */
import { documentLibraries } from "../../lazy.ts";
import { DocumentError } from "./xml.ts";

/** What one document's parts may inflate to, in all (bytes). */
export const MAX_INFLATED = 64 * 1024 * 1024;
const MAX_PARTS = 2_000;

export type Parts = Map<string, string>;

/** The text of the parts `wanted` picks (by name), UTF-8 decoded; throws DocumentError past the caps or for a broken zip. */
export async function readParts(body: Uint8Array, wanted: (name: string) => boolean): Promise<Parts> {
  const { fflate } = await documentLibraries();
  let total = 0;
  let seen = 0;
  let files: Record<string, Uint8Array>;
  try {
    files = fflate.unzipSync(body, {
      filter: (f) => {
        if (++seen > MAX_PARTS) throw new DocumentError(`the document has more than ${MAX_PARTS} parts`);
        if (!wanted(f.name)) return false;
        total += f.originalSize;
        if (total > MAX_INFLATED) throw new DocumentError(`the document's text parts inflate to more than ${MAX_INFLATED / 2 ** 20} MB`);
        return true;
      },
    });
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    throw new DocumentError(`it is not a readable zip archive (${err instanceof Error ? err.message : String(err)})`);
  }
  const out: Parts = new Map();
  const utf8 = new TextDecoder();
  let inflated = 0;
  for (const [name, bytes] of Object.entries(files)) {
    // The declared sizes may lie: what was really inflated counts too.
    inflated += bytes.byteLength;
    if (inflated > MAX_INFLATED) throw new DocumentError(`the document's text parts inflate to more than ${MAX_INFLATED / 2 ** 20} MB`);
    out.set(name, utf8.decode(bytes));
  }
  return out;
}
