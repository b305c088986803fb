/**
 * Loads the shared article-extraction benchmark (../shared/bench/article-extraction beside the repo,
 * or $QUARRY_SHARED_DIR/bench/article-extraction). bench/ is not core, so node: modules are fine here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";

export interface BenchPage {
  id: string;
  url: string;
  html: string;
  truth: string;
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

export function sharedDir(): string {
  return process.env.QUARRY_SHARED_DIR ?? resolve(repoRoot, "..", "shared");
}

export function datasetDir(): string {
  return join(sharedDir(), "bench", "article-extraction");
}

export function loadPages(): BenchPage[] {
  const dir = datasetDir();
  const truth = JSON.parse(readFileSync(join(dir, "ground-truth.json"), "utf8")) as Record<
    string,
    { articleBody: string; url: string }
  >;
  const files = readdirSync(join(dir, "html"))
    .filter((f) => f.endsWith(".html.gz"))
    .sort();
  return files.map((file) => {
    const id = file.slice(0, file.indexOf("."));
    const entry = truth[id];
    if (!entry) throw new Error(`no ground truth for ${id}`);
    const html = new TextDecoder("utf-8").decode(gunzipSync(readFileSync(join(dir, "html", file))));
    return { id, url: entry.url, html, truth: entry.articleBody ?? "" };
  });
}
