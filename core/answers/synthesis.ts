/**
 * Extractive synthesis, deterministic: only sentences on the question (relevance.ts) can be
 * findings; near-duplicates across sources are merged into one finding whose citations
 * combine; findings are chosen by maximal marginal relevance, with agreement across sites
 * lifting a finding. The summary is built from the findings, each sentence followed by its
 * citations.
 */
import type { Passage } from "./evidence.ts";
import { buildQuestionModel, sentenceRelevance, type QuestionModel } from "./relevance.ts";
import { splitSentences } from "./sentences.ts";
import { containment, contentTokens, setCosine as cosine } from "./words.ts";

export { splitSentences };

export interface Finding {
  text: string;
  citations: string[];
}

export interface Report {
  summary: string;
  findings: Finding[];
}

/** Citation ids sorted S1, S2, …, S10. */
export function sortIds(ids: Iterable<string>): string[] {
  return [...new Set(ids)].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
}

/** `text [S1][S3].` — the citations sit before the sentence's closing punctuation. */
export function citeSentence(text: string, citations: readonly string[]): string {
  const m = text.trim().match(/^(.*?)([.!?]*["”’']?)$/s)!;
  const body = m[1]!.replace(/[.!?]+$/, "");
  const end = /[!?]/.test(m[2]!) ? m[2]!.replace(/["”’']/g, "") : ".";
  const quote = /["”’']$/.test(m[2]!) ? m[2]!.slice(-1) : "";
  return `${body}${quote} ${citations.map((c) => `[${c}]`).join("")}${end}`;
}

/** Plausible report sentences: whole, not too short or long, not a heading or a fragment. */
function usable(sentence: string): boolean {
  const words = sentence.split(" ").length;
  if (words < 6 || words > 70) return false;
  if (!/[.!?]["”’']?$/.test(sentence)) return false;
  if (/^[a-z,;:)\]]/.test(sentence)) return false;
  return !/(click here|subscribe|cookies?|sign up|newsletter|advertisement|all rights reserved)/i.test(sentence);
}

/** Sentences that lean on a previous one read badly alone: a small penalty, not a ban. */
const DANGLING = /^(But|And|So|Also|However|This|That|These|Those|It|He|She|They|His|Her|Their|Its)\b/;

interface Cluster {
  text: string;
  tokens: Set<string>;
  citations: Set<string>;
  hosts: Set<string>;
  score: number;
  order: number;
}

export interface ExtractiveOptions {
  findings: number;
  summarySentences: number;
  /** Share of a sentence's words another must contain to count as the same claim (default 0.6). */
  duplicateThreshold?: number;
  /** The question model over the sources (relevance.ts); built from the evidence when absent. */
  model?: QuestionModel;
  /** Weight of redundancy against relevance when choosing the next finding (MMR; default 0.3). */
  redundancyWeight?: number;
}

/**
 * A sentence this far below the best one's relevance does not answer the question well enough to
 * cite. It holds for every tier: a longer report stops when it runs out of sentences above it
 * rather than reaching down the ranking to fill its length.
 */
const RELATIVE_FLOOR = 0.4;

/**
 * Findings past a short report's length (the summary tier's five) must score at least this share of
 * the best one: the sentences left by then are mostly pages' background, so a longer report grows
 * only while strong answers remain, and stops short of its length rather than fill it.
 */
const SHORT_REPORT = 5;
const LONG_FLOOR = 0.5;

export function extractiveReport(evidence: readonly Passage[], question: string, opts: ExtractiveOptions): Report {
  const model = opts.model ?? modelFromEvidence(evidence, question);
  const candidates: { text: string; sourceId: string; host: string; score: number; order: number; tokens: Set<string> }[] = [];
  evidence.forEach((p, pi) =>
    splitSentences(p.text).forEach((s, si) => {
      if (!usable(s)) return;
      // Only sentences on the question are findings: the document must be relevant and the sentence must say something about it.
      const relevance = sentenceRelevance(s, p.sourceId, model);
      if (relevance <= 0) return;
      const text = s.replace(/\[/g, "(").replace(/\]/g, ")");
      candidates.push({ text, sourceId: p.sourceId, host: p.host, score: relevance * (DANGLING.test(s) ? 0.85 : 1), order: pi * 1000 + si, tokens: contentTokens(s) });
    }),
  );
  if (candidates.length === 0) return { summary: "", findings: [] };
  const best = Math.max(...candidates.map((c) => c.score));
  const scored = candidates.filter((c) => c.score >= RELATIVE_FLOOR * best).sort((a, b) => b.score - a.score || a.order - b.order);

  // Near-duplicates across sources are one claim: one finding citing each source that states it.
  const threshold = opts.duplicateThreshold ?? 0.6;
  const clusters: Cluster[] = [];
  for (const s of scored) {
    const same = clusters.find((c) => {
      const overlap = Math.max(containment(s.tokens, c.tokens), containment(c.tokens, s.tokens));
      return overlap >= threshold && Math.min(s.tokens.size, c.tokens.size) >= 3;
    });
    if (same) {
      same.citations.add(s.sourceId);
      same.hosts.add(s.host);
    } else {
      clusters.push({ text: s.text, tokens: s.tokens, citations: new Set([s.sourceId]), hosts: new Set([s.host]), score: s.score, order: clusters.length });
    }
  }

  // Maximal marginal relevance: each next finding is the best trade of relevance (lifted when
  // independent sites agree on it) against similarity to the findings already chosen, so the
  // report covers the distinct aspects the sources offer. At most half the findings from one
  // site unless others agree, so one page cannot fill the report.
  const lambda = opts.redundancyWeight ?? 0.3;
  const value = (c: Cluster) => c.score * (1 + 0.15 * (c.hosts.size - 1));
  const top = Math.max(...clusters.map(value)) || 1;
  const left = [...clusters];
  const chosen: Cluster[] = [];
  const perHost = new Map<string, number>();
  // The cap is about other sites' voices: with every candidate on one site there are none to make room for.
  const sites = new Set(clusters.flatMap((c) => [...c.hosts])).size;
  const cap = sites > 1 ? Math.max(2, Math.ceil(opts.findings / 2)) : opts.findings;
  while (chosen.length < opts.findings && left.length) {
    let pick = -1;
    let pickValue = -Infinity;
    left.forEach((c, i) => {
      const lead = [...c.hosts][0]!;
      if (c.hosts.size === 1 && (perHost.get(lead) ?? 0) >= cap) return;
      if (chosen.length >= SHORT_REPORT && c.score < LONG_FLOOR * best) return;
      const redundancy = Math.max(0, ...chosen.map((d) => cosine(c.tokens, d.tokens)));
      // A site already cited weighs a little against the next finding from it: the sources' other voices first.
      const repeat = Math.min(...[...c.hosts].map((h) => perHost.get(h) ?? 0));
      const v = (1 - lambda) * (value(c) / top) - lambda * redundancy - 0.15 * repeat;
      if (v > pickValue || (v === pickValue && c.order < left[pick]!.order)) {
        pick = i;
        pickValue = v;
      }
    });
    if (pick < 0) break;
    const [c] = left.splice(pick, 1);
    for (const h of c!.hosts) perHost.set(h, (perHost.get(h) ?? 0) + 1);
    chosen.push(c!);
  }
  const findings: Finding[] = chosen.map((c) => ({ text: c.text, citations: sortIds(c.citations) }));
  const summary = findings
    .slice(0, opts.summarySentences)
    .map((f) => citeSentence(f.text, f.citations))
    .join(" ");
  return { summary, findings };
}

/** A question model from the evidence alone (each source's passages as its text). */
function modelFromEvidence(evidence: readonly Passage[], question: string): QuestionModel {
  const bySource = new Map<string, { host: string; texts: string[] }>();
  for (const p of evidence) {
    const e = bySource.get(p.sourceId) ?? { host: p.host, texts: [] };
    e.texts.push(p.text);
    bySource.set(p.sourceId, e);
  }
  return buildQuestionModel(question, [...bySource].map(([id, e]) => ({ id, host: e.host, title: "", text: e.texts.join("\n\n"), fromPage: true })));
}
