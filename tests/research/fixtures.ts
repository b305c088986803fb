/** Five real news articles on one subject (the 2019 impeachment inquiry), served from a local page server. */
import { createSafeFetch, parseAllowList } from "../../adapters/fetch/mod.ts";
import type { PagePort } from "../../core/ports.ts";
import { contentTokens, containment } from "../../core/answers/words.ts";
import { article, articleIds, groundTruth } from "../helpers/articles.ts";
import { send, startPageServer, type PageServer } from "../helpers/page-server.ts";

export const QUESTION = "What happened in the Trump impeachment inquiry hearings?";

/**
 * Benchmark ids of the articles that mention impeachment at least three times: of the whole benchmark,
 * these five, all kept in tests/fixtures/article-extraction (the count guards against losing one).
 */
export function impeachmentIds(): string[] {
  const truth = groundTruth();
  const ids = articleIds().filter((id) => truth[id]!.articleBody.toLowerCase().split("impeachment").length > 3);
  if (ids.length !== 5) throw new Error(`tests/fixtures/article-extraction should hold the 5 impeachment-inquiry articles, has ${ids.length}: ${ids.join(", ")}`);
  return ids;
}

export interface Served {
  /** The article's own local site (one page server each, so each is a distinct host:port). */
  site: PageServer;
  url: string;
  path: string;
  title: string;
  snippet: string;
  /** What a citation may rest on: the article's true text and the engine's snippet. */
  text: string;
}

export async function serveArticles(): Promise<Served[]> {
  const ids = impeachmentIds();
  const sites = await Promise.all(ids.map(() => startPageServer()));
  return ids.map((id, i) => {
    const site = sites[i]!;
    const page = article(id);
    const path = `/news/${i + 1}`;
    site.route(path, send("text/html; charset=utf-8", page.html));
    const slug = new URL(page.url).pathname.split("/").filter(Boolean).pop() ?? `article ${i + 1}`;
    const title = slug.replace(/\.[a-z]+$/, "").replace(/[-_]+/g, " ");
    const snippet = page.truth.split(/(?<=[.!?])\s+/)[0]!.slice(0, 300);
    return { site, url: `${site.url}${path}`, path, title, snippet, text: `${page.truth}\n${snippet}` };
  });
}

/** A SearXNG JSON answer whose results are the given local URLs. */
export function searxngBody(query: string, results: { url: string; title: string; content: string }[]): string {
  return JSON.stringify({
    query,
    results: results.map((r, i) => ({ ...r, engine: "bing", engines: ["bing"], positions: [i + 1], score: results.length - i, category: "general" })),
    number_of_results: results.length, answers: [], corrections: [], infoboxes: [], suggestions: [], unresponsive_engines: [],
  });
}

/** The guarded page fetch, refusing anything but 127.0.0.1 outright: no test reaches the network. */
export function localPages(): PagePort {
  const safe = createSafeFetch({ allow: parseAllowList(["127.0.0.1/32"]) });
  return {
    fetchPage(url, options) {
      if (new URL(url).hostname !== "127.0.0.1") return Promise.reject(new Error(`test refused non-local page ${url}`));
      return safe.fetchPage(url, options);
    },
  };
}

/** Share of a sentence's content words found in a text. */
export function supportShare(sentence: string, text: string): number {
  return containment(contentTokens(sentence), contentTokens(text));
}

/** `text [S1][S2].` sentences of a summary, with their citations. */
export function summarySentences(summary: string): { text: string; citations: string[] }[] {
  return summary
    .split(/(?<=\][.!?])\s+/)
    .filter(Boolean)
    .map((s) => ({ text: s.replace(/\s*(\[S\d+\])+([.!?])$/, "$2"), citations: [...s.matchAll(/\[(S\d+)\]/g)].map((m) => m[1]!) }));
}

/** The best share of a sentence's content words held by one paragraph (or two adjacent ones) of a text. */
export function bestParagraphShare(sentence: string, text: string): number {
  const words = contentTokens(sentence);
  const paras = text.split(/\n+/).map(contentTokens);
  return Math.max(0, ...paras.map((p, i) => containment(words, new Set([...p, ...(paras[i + 1] ?? [])]))));
}
