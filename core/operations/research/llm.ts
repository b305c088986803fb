/**
 * The optional model (QUARRY_LLM_URL, an OpenAI-compatible chat endpoint, called through the
 * fetch port): it may plan sub-queries and write the report from the ranked passages only.
 * Every sentence it writes must cite like [S1]; a citation whose source does not contain the
 * sentence's words is dropped, and a sentence left without one is dropped too.
 */
import type { FetchPort } from "../../ports.ts";
import { containment, contentTokens, sourcePassages, type Passage, type SourceText } from "./evidence.ts";
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

/**
 * Keeps a citation only when the cited source's passages contain enough of the sentence's
 * words: at least `minShare` of them and at least two, in one passage or in the whole source.
 */
export function verifyCitations(sentence: { text: string; citations: string[] }, support: ReadonlyMap<string, Set<string>[]>, minShare = 0.5) {
  const words = contentTokens(sentence.text);
  const kept = sentence.citations.filter((id) => {
    const passages = support.get(id);
    if (!passages || words.size === 0) return false;
    const whole = new Set<string>();
    for (const p of passages) for (const t of p) whole.add(t);
    const share = Math.max(containment(words, whole) * 0.9, ...passages.map((p) => containment(words, p)));
    return share >= minShare && Math.round(containment(words, whole) * words.size) >= Math.min(2, words.size);
  });
  return { text: sentence.text, citations: kept };
}

/** Content-word sets of every passage of every source, for verifying citations. */
export function supportIndex(sources: readonly SourceText[]): Map<string, Set<string>[]> {
  return new Map(sources.map((s) => [s.id, sourcePassages(s).map(contentTokens)]));
}

export interface VerifiedReport {
  report: Report;
  dropped: { citations: number; sentences: number };
}

/** The model's report with unsupported citations and uncited sentences removed. */
export function verifyReport(raw: { summary: string; findings: string[] }, support: ReadonlyMap<string, Set<string>[]>, maxFindings: number): VerifiedReport {
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
