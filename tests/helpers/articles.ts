/**
 * Real article pages with their ground truth: a chosen subset of the public article-extraction
 * benchmark, kept in the repository at tests/fixtures/article-extraction/ (which pages, why, where
 * they come from and under what licence: tests/fixtures/README.md). Benchmarks read the full set
 * elsewhere (bench/README.md); tests read only this.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";

export const FIXTURES_DIR = fileURLToPath(new URL("../fixtures/", import.meta.url));
const ARTICLES = `${FIXTURES_DIR}article-extraction/`;

/** The path of a file under tests/fixtures/, or an error naming it when it is not there. */
export function fixturePath(relative: string): string {
  const path = `${FIXTURES_DIR}${relative}`;
  if (!existsSync(path)) {
    throw new Error(`test fixture missing: ${path} (tests/fixtures/ is part of the repository; see tests/fixtures/README.md)`);
  }
  return path;
}

export interface Article {
  /** The benchmark's page id (64 hex digits). */
  id: string;
  /** The page as fetched, UTF-8. */
  html: string;
  /** The address it was fetched from. */
  url: string;
  /** The ground truth: the article's text. */
  truth: string;
}

let truths: Record<string, { articleBody: string; url: string }> | null = null;

/** The subset's ground truth: `{ id: { articleBody, url } }`. */
export function groundTruth(): Record<string, { articleBody: string; url: string }> {
  truths ??= JSON.parse(readFileSync(fixturePath("article-extraction/ground-truth.json"), "utf8")) as Record<string, { articleBody: string; url: string }>;
  return truths;
}

/** Every page id of the subset, sorted. */
export function articleIds(): string[] {
  return readdirSync(fixturePath("article-extraction/html"))
    .filter((f) => f.endsWith(".html.gz"))
    .map((f) => f.slice(0, -".html.gz".length))
    .sort();
}

/** One page of the subset, by its id or the start of it (unique). */
export function article(idPrefix: string): Article {
  const matches = articleIds().filter((id) => id.startsWith(idPrefix));
  if (matches.length !== 1) {
    throw new Error(`test fixture missing: ${matches.length ? "more than one" : "no"} page ${idPrefix}* in ${ARTICLES}html (see tests/fixtures/README.md)`);
  }
  const id = matches[0]!;
  const entry = groundTruth()[id];
  if (!entry) throw new Error(`test fixture missing: no ground truth for ${id} in ${ARTICLES}ground-truth.json`);
  const html = new TextDecoder().decode(gunzipSync(readFileSync(fixturePath(`article-extraction/html/${id}.html.gz`))));
  return { id, html, url: entry.url, truth: entry.articleBody };
}
