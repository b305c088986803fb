/**
 * Reads pages of the shared article-extraction benchmark straight from ../shared beside the repo
 * (or $QUARRY_SHARED_DIR), so tests use real pages without copying 6 MB into the tree.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

export const sharedDir = process.env.QUARRY_SHARED_DIR ?? resolve(repoRoot, "..", "shared");
const benchDir = join(sharedDir, "bench", "article-extraction");

let truth: Record<string, { articleBody: string; url: string }> | null = null;

export interface SharedPage {
  html: string;
  url: string;
  truth: string;
}

/** `idPrefix`: the start of a page id (file name up to the first dot). */
export function sharedPage(idPrefix: string): SharedPage {
  truth ??= JSON.parse(readFileSync(join(benchDir, "ground-truth.json"), "utf8"));
  const file = readdirSync(join(benchDir, "html")).find((f) => f.startsWith(idPrefix));
  if (!file) throw new Error(`no benchmark page ${idPrefix}* in ${benchDir}`);
  const id = file.slice(0, file.indexOf("."));
  const entry = truth![id]!;
  const html = new TextDecoder().decode(gunzipSync(readFileSync(join(benchDir, "html", file))));
  return { html, url: entry.url, truth: entry.articleBody };
}
