/**
 * Extractive synthesis, deterministic: the ranked passages' sentences are scored (their
 * passage's score and their own match to the question), near-duplicates across sources are
 * merged into one finding whose citations combine, and findings that several sources agree on
 * rank higher. The summary is the strongest findings, each sentence followed by its citations.
 */
import { lexicalScores } from "../../ranking/lexical.ts";
import { containment, contentTokens, type Passage } from "./evidence.ts";

export interface Finding {
  text: string;
  citations: string[];
}

export interface Report {
  summary: string;
  findings: Finding[];
}

const ABBREVIATIONS = /\b(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|Sen|Rep|Gov|Gen|Col|Lt|Sgt|Inc|Ltd|Co|Corp|vs|etc|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|No|U\.S|U\.K|e\.g|i\.e)\.$/;

/** Sentences of a passage; a period after a common abbreviation does not end one. */
export function splitSentences(text: string): string[] {
  const parts = text.replace(/\s+/g, " ").trim().split(/(?<=[.!?]["”’']?)\s+(?=["“‘(]?[A-Z0-9])/);
  const out: string[] = [];
  for (const part of parts) {
    const prev = out[out.length - 1];
    if (prev !== undefined && (ABBREVIATIONS.test(prev) || /\b[A-Z]\.$/.test(prev))) out[out.length - 1] = `${prev} ${part}`;
    else out.push(part);
  }
  return out.map((s) => s.trim()).filter(Boolean);
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
}

export function extractiveReport(evidence: readonly Passage[], question: string, opts: ExtractiveOptions): Report {
  const candidates: { text: string; sourceId: string; host: string; passageScore: number; order: number }[] = [];
  evidence.forEach((p, pi) =>
    splitSentences(p.text).forEach((s, si) => {
      const text = s.replace(/\[/g, "(").replace(/\]/g, ")");
      if (usable(text)) candidates.push({ text, sourceId: p.sourceId, host: p.host, passageScore: p.score, order: pi * 1000 + si });
    }),
  );
  if (candidates.length === 0) return { summary: "", findings: [] };

  const lexical = lexicalScores(question, candidates.map((c) => ({ title: "", content: c.text })));
  const maxLex = Math.max(...lexical) || 1;
  const scored = candidates
    .map((c, i) => ({ ...c, score: (0.6 * c.passageScore + 0.4 * (lexical[i]! / maxLex)) * (DANGLING.test(c.text) ? 0.85 : 1), tokens: contentTokens(c.text) }))
    .sort((a, b) => b.score - a.score || a.order - b.order);

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
  // Agreement across independent sites lifts a finding; the order stays deterministic.
  const ranked = clusters
    .map((c) => ({ c, score: c.score * (1 + 0.15 * (c.hosts.size - 1)) }))
    .sort((a, b) => b.score - a.score || a.c.order - b.c.order)
    .map(({ c }) => c);

  // Findings: at most two from one site in a row of the top, so one page cannot fill the report.
  const findings: Finding[] = [];
  const perHost = new Map<string, number>();
  const cap = Math.max(2, Math.ceil(opts.findings / 2));
  for (const c of ranked) {
    const lead = [...c.hosts][0]!;
    if (c.hosts.size === 1 && (perHost.get(lead) ?? 0) >= cap) continue;
    for (const h of c.hosts) perHost.set(h, (perHost.get(h) ?? 0) + 1);
    findings.push({ text: c.text, citations: sortIds(c.citations) });
    if (findings.length >= opts.findings) break;
  }
  const summary = findings
    .slice(0, opts.summarySentences)
    .map((f) => citeSentence(f.text, f.citations))
    .join(" ");
  return { summary, findings };
}
