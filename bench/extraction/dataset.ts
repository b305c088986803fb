/**
 * Loads the article-extraction benchmark ($QUARRY_BENCH_DATA/article-extraction, see bench/data.ts
 * and bench/README.md). bench/ is not core, so node: modules are fine here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { benchSet } from "../data.ts";

export interface BenchPage {
  id: string;
  url: string;
  html: string;
  truth: string;
}

export function datasetDir(): string {
  return benchSet("article-extraction");
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
