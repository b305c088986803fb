/**
 * The optional model (QUARRY_LLM_URL, an OpenAI-compatible chat endpoint, called through the
 * fetch port): it may plan sub-queries and write the report from the ranked passages only.
 * Every sentence it writes must cite like [S1]; a citation whose source does not contain the
 * sentence's words is dropped, and a sentence left without one is dropped too.
 */
import type { FetchPort } from "../ports.ts";
import { sourcePassages, type Passage, type SourceText } from "./evidence.ts";
import { containment, contentTokens } from "./words.ts";
import { citeSentence, sortIds, splitSentences, type Finding, type Report } from "./synthesis.ts";

export interface LlmConfig {
  url: string;
  model: string | null;
  key: string | null;
}

export interface ChatResult {
  content: string;
  tokens: number;
}

export class LlmError extends Error {}

/** One chat completion; throws LlmError on timeout, HTTP errors and malformed answers. */
export async function chat(fetch: FetchPort, llm: LlmConfig, messages: { role: string; content: string }[], timeoutMs: number, maxTokens = 1200): Promise<ChatResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (llm.key) headers.authorization = `Bearer ${llm.key}`;
    const res = await fetch(`${llm.url.replace(/\/+$/, "")}/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: llm.model ?? "default", messages, temperature: 0, max_tokens: maxTokens }),
      signal: controller.signal,
    });
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      throw new LlmError(`model answered HTTP ${res.status}`);
    }
    const data = (await res.json()) as { choices?: { message?: { content?: unknown } }[]; usage?: { total_tokens?: unknown } };
    const content = data.choices?.[0]?.message?.content;
    if (typeof content !== "string" || !content.trim()) throw new LlmError("model answered without content");
    const tokens = typeof data.usage?.total_tokens === "number" ? data.usage.total_tokens : 0;
    return { content, tokens };
  } catch (err) {
    if (err instanceof LlmError) throw err;
    if (controller.signal.aborted) throw new LlmError(`model did not answer within ${timeoutMs} ms`);
    throw new LlmError(`model unreachable: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearTimeout(timer);
  }
}

const SYSTEM = [
  "You write research reports strictly from the numbered source passages you are given.",
  "Every sentence must end with citations of the sources that state it, like [S1] or [S2][S4], before the final period.",
  "Never use knowledge that is not in the passages; leave out anything the passages do not say.",
  'Answer with JSON only: {"summary": "<a few cited sentences>", "findings": ["<one cited sentence>", ...]}.',
].join(" ");

export function synthesisMessages(question: string, evidence: readonly Passage[], titles: ReadonlyMap<string, string>, findings: number) {
  const bySource = new Map<string, string[]>();
  for (const p of evidence) bySource.set(p.sourceId, [...(bySource.get(p.sourceId) ?? []), p.text]);
  const blocks = [...bySource.entries()].map(([id, texts]) => `[${id}] ${titles.get(id) ?? ""}\n${texts.map((t) => `- ${t}`).join("\n")}`);
  return [
    { role: "system", content: SYSTEM },
    { role: "user", content: `Question: ${question}\n\nSources:\n${blocks.join("\n\n")}\n\nWrite a summary and at most ${findings} findings.` },
  ];
}

const CITE = /\[\s*(S\d+(?:\s*[,;]\s*S\d+)*)\s*\]/g;

/** A sentence's citation ids and its text without them. */
export function parseCited(sentence: string): { text: string; citations: string[] } {
  const ids: string[] = [];
  const text = sentence
    .replace(CITE, (_, list: string) => {
      ids.push(...list.split(/[,;]/).map((s) => s.trim()));
      return "";
    })
    .replace(/\s+([.!?,;:])/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
  return { text, citations: sortIds(ids) };
}

/** Cited sentences of a paragraph; citations written after the period ("… end. [S2]") stay with their sentence. */
export function citedSentences(paragraph: string): { text: string; citations: string[] }[] {
  const moved = paragraph.replace(/([.!?])((?:\s*\[\s*S\d+(?:\s*[,;]\s*S\d+)*\s*\])+)/g, "$2$1");
  return splitSentences(moved).map(parseCited).filter((s) => s.text.length > 0);
}

/** The model's answer as a summary and findings: JSON when it complied, plain prose otherwise. */
export function parseModelReport(content: string): { summary: string; findings: string[] } {
  const json = content.replace(/^\s*```(?:json)?\s*/i, "").replace(/\s*```\s*$/, "");
  try {
    const data = JSON.parse(json) as { summary?: unknown; findings?: unknown };
    const summary = typeof data.summary === "string" ? data.summary : "";
    const findings = Array.isArray(data.findings) ? data.findings.filter((f): f is string => typeof f === "string") : [];
    return { summary, findings };
  } catch {
    const paragraphs = content.split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean);
    const bullets = content.split(/\n/).filter((l) => /^\s*[-*•]\s+/.test(l)).map((l) => l.replace(/^\s*[-*•]\s+/, ""));
    return { summary: paragraphs.find((p) => !/^\s*[-*•]/.test(p)) ?? "", findings: bullets };
  }
}

/** What citations are checked against: each source's passages as word sets, and the words' rarity. */
export interface SupportIndex {
  passages: Map<string, Set<string>[]>;
  /** Inverse document frequency over every passage of every source: rare words weigh more. */
  idf: (word: string) => number;
}

export function supportIndex(sources: readonly SourceText[]): SupportIndex {
  const passages = new Map(sources.map((s) => [s.id, sourcePassages(s).map(contentTokens)]));
  const df = new Map<string, number>();
  let n = 0;
  for (const list of passages.values()) {
    for (const p of list) {
      n++;
      for (const w of p) df.set(w, (df.get(w) ?? 0) + 1);
    }
  }
  return { passages, idf: (w) => Math.log(1 + n / (df.get(w) ?? 0.5)) };
}

/**
 * Keeps a citation only when one passage of the cited source (or two adjacent ones) holds at
 * least `minShare` of the sentence's words, weighted by rarity, and at least two of them.
 * Checked against single passages, not the whole page: on one topic, any long article holds
 * most of a sentence's words somewhere.
 */
export function verifyCitations(sentence: { text: string; citations: string[] }, index: SupportIndex, minShare = 0.5) {
  const words = [...contentTokens(sentence.text)];
  const weights = words.map(index.idf);
  const total = weights.reduce((a, b) => a + b, 0);
  const share = (p: ReadonlySet<string>, q?: ReadonlySet<string>) => {
    let hit = 0;
    let count = 0;
    words.forEach((w, i) => {
      if (p.has(w) || q?.has(w)) {
        hit += weights[i]!;
        count++;
      }
    });
    return { share: total ? hit / total : 0, count };
  };
  const kept = sentence.citations.filter((id) => {
    const list = index.passages.get(id);
    if (!list || words.length === 0) return false;
    return list.some((p, i) => [share(p), share(p, list[i + 1])].some((s) => s.share >= minShare && s.count >= Math.min(2, words.length)));
  });
  return { text: sentence.text, citations: kept };
}

export interface VerifiedReport {
  report: Report;
  dropped: { citations: number; sentences: number };
}

/** The model's report with unsupported citations and uncited sentences removed. */
export function verifyReport(raw: { summary: string; findings: string[] }, support: SupportIndex, maxFindings: number): VerifiedReport {
  const dropped = { citations: 0, sentences: 0 };
  const check = (s: { text: string; citations: string[] }) => {
    const v = verifyCitations(s, support);
    dropped.citations += s.citations.length - v.citations.length;
    if (v.citations.length === 0) dropped.sentences++;
    return v;
  };
  const summary = citedSentences(raw.summary).map(check).filter((s) => s.citations.length > 0);
  const findings: Finding[] = raw.findings
    .flatMap((f) => citedSentences(f))
    .map(check)
    .filter((s) => s.citations.length > 0)
    .slice(0, maxFindings);
  return { report: { summary: summary.map((s) => citeSentence(s.text, s.citations)).join(" "), findings }, dropped };
}
