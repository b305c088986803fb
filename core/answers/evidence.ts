/**
 * Evidence: the sources' text split into passages, ranked by what their sentences say about
 * the question (relevance.ts: a passage of a page that is not on the question scores 0, however
 * many of the question's words it holds), with BM25 against the question and its sub-queries
 * (core/ranking/lexical.ts) as a smaller share, blended with agreement — how well the other
 * hostnames' passages say the same thing — and selected with a cap per hostname, so no
 * report rests on one site.
 */
import { lexicalScores } from "../ranking/lexical.ts";
import { passages as splitPassages } from "./excerpt.ts";
import { buildQuestionModel, sentenceRelevance, type QuestionModel, type Semantic } from "./relevance.ts";
import { splitSentences } from "./sentences.ts";
import { contentTokens, setCosine as cosine } from "./words.ts";

export interface SourceText {
  id: string;
  host: string;
  /** Page text (paragraphs separated by blank lines), or the engine's snippet. */
  text: string;
  fromPage: boolean;
  /** The page's (or result's) title, a hint of what the page is about. */
  title?: string;
}

export interface Passage {
  sourceId: string;
  host: string;
  text: string;
  /** Position in its source. */
  index: number;
  relevance: number;
  agreement: number;
  score: number;
}

/** Passages of a source: page paragraphs of at least 8 words; a snippet counts from 4. */
export function sourcePassages(source: SourceText): string[] {
  const min = source.fromPage ? 8 : 4;
  return splitPassages(source.text).filter((p) => p.split(" ").length >= min);
}

const SNIPPET_WEIGHT = 0.5;

export interface RankOptions {
  /** Passages kept in all. */
  limit: number;
  /** Passages kept per hostname. */
  perHost: number;
  /** Weight of agreement against relevance, in [0, 1] (default 0.3). */
  agreementWeight?: number;
  /** Relevance-ranked passages considered for agreement (bounds the pairwise work). */
  shortlist?: number;
  /** The question model built over these sources (built here when absent). */
  model?: QuestionModel;
}

/** The question model over sources. */
export function modelOf(sources: readonly SourceText[], question: string, semantic: Semantic | null = null): QuestionModel {
  return buildQuestionModel(question, sources.map((s) => ({ id: s.id, host: s.host, title: s.title ?? "", text: s.text, fromPage: s.fromPage })), semantic);
}

/** Ranked evidence, best first; deterministic for the same input. */
export function rankPassages(sources: readonly SourceText[], question: string, subQueries: readonly string[], opts: RankOptions): Passage[] {
  const all: Omit<Passage, "relevance" | "agreement" | "score">[] = [];
  for (const s of sources) sourcePassages(s).forEach((text, index) => all.push({ sourceId: s.id, host: s.host, text, index }));
  if (all.length === 0) return [];
  const fromPage = new Set(sources.filter((s) => s.fromPage).map((s) => s.id));

  const docs = all.map((p) => ({ title: "", content: p.text }));
  const main = lexicalScores(question, docs);
  const subs = subQueries.map((q) => lexicalScores(q, docs));
  const lexical = main.map((m, i) => (subs.length ? (2 * m + subs.reduce((sum, s) => sum + s[i]!, 0) / subs.length) / 3 : m));
  const maxLex = Math.max(...lexical) || 1;
  const model = opts.model ?? modelOf(sources, question);
  // A passage counts by its best sentence on the question; its words' BM25 only within a relevant page.
  const relevance = all.map((p, i) => {
    const best = Math.max(0, ...splitSentences(p.text).map((s) => sentenceRelevance(s, p.sourceId, model)));
    return best > 0 ? 0.75 * best + 0.25 * (lexical[i]! / maxLex) * (model.documents.get(p.sourceId) ?? 0) : 0;
  });
  // A snippet is a weaker witness than the page it stands for: it counts for less once any page was read.
  const anyPage = sources.some((s) => s.fromPage);
  all.forEach((p, i) => {
    if (anyPage && !fromPage.has(p.sourceId)) relevance[i] = relevance[i]! * SNIPPET_WEIGHT;
  });
  const maxRel = Math.max(...relevance) || 1;

  // Agreement: for each other hostname, the best cosine between this passage and one of its passages.
  const hosts = [...new Set(all.map((p) => p.host))];
  const tokens = all.map((p) => contentTokens(p.text));
  const shortlist = all
    .map((_, i) => i)
    .sort((a, b) => relevance[b]! - relevance[a]! || a - b)
    .slice(0, opts.shortlist ?? 80);
  const agreement = new Array<number>(all.length).fill(0);
  if (hosts.length > 1) {
    for (const i of shortlist) {
      const best = new Map<string, number>();
      for (let j = 0; j < all.length; j++) {
        const host = all[j]!.host;
        if (host === all[i]!.host) continue;
        const sim = cosine(tokens[i]!, tokens[j]!);
        if (sim > (best.get(host) ?? 0)) best.set(host, sim);
      }
      let sum = 0;
      for (const v of best.values()) sum += v;
      agreement[i] = sum / (hosts.length - 1);
    }
  }
  const maxAgree = Math.max(...agreement) || 1;
  const w = opts.agreementWeight ?? 0.3;

  const scored: Passage[] = all.map((p, i) => ({
    ...p,
    relevance: relevance[i]! / maxRel,
    agreement: agreement[i]! / maxAgree,
    score: Math.round(((1 - w) * (relevance[i]! / maxRel) + w * (agreement[i]! / maxAgree)) * 10_000) / 10_000,
  }));
  const order = scored
    .map((p, i) => ({ p, i }))
    .filter(({ p }) => p.relevance > 0)
    .sort((a, b) => b.p.score - a.p.score || a.i - b.i);

  const perHost = new Map<string, number>();
  const chosen: Passage[] = [];
  for (const { p } of order) {
    const n = perHost.get(p.host) ?? 0;
    if (n >= opts.perHost) continue;
    perHost.set(p.host, n + 1);
    chosen.push(p);
    if (chosen.length >= opts.limit) break;
  }
  return chosen;
}
