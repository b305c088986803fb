/**
 * `include_answer` (api.md §8): a few sentences answering the query from the results, each
 * citing the result numbers it rests on (`[1]`, `[2][4]`: positions in `results`, from 1).
 * With QUARRY_LLM_URL the configured model writes it from the same text, and every citation
 * is checked against the cited result's words as research does (core/answers/llm.ts); without one, or
 * when the model fails, the answer is extractive and deterministic (core/answers/synthesis.ts).
 */
import { passages } from "../../answers/excerpt.ts";
import type { Passage, SourceText } from "../../answers/evidence.ts";
import { contentTokens } from "../../answers/words.ts";
import { chat, LlmError, parseModelReport, supportIndex, synthesisMessages, verifyReport, type LlmConfig } from "../../answers/llm.ts";
import { citeSentence, extractiveReport } from "../../answers/synthesis.ts";
import type { FetchPort } from "../../ports.ts";

export interface AnswerSource {
  title: string;
  url: string;
  /** The page's text when it was read, else the engine's snippet. */
  text: string;
}

export interface AnswerDeps {
  fetch: FetchPort;
  llm: LlmConfig | null;
  /** Longest the model may take. */
  timeoutMs: number;
}

export interface Answer {
  text: string | null;
  method: "extractive" | "llm";
  tokens: number;
  /** Why the model's answer was not used, when it was tried and failed. */
  llmError?: string;
}

/** Sentences in the answer: `basic` a few, `advanced` more. */
const SENTENCES = { basic: 3, advanced: 6 } as const;

/** `[S3]` (the research citation form the shared synthesis writes) → `[3]`. */
const toResultNumbers = (text: string) => text.replace(/\[S(\d+)\]/g, "[$1]");

function sourceTexts(sources: readonly AnswerSource[]): SourceText[] {
  return sources.flatMap((s, i) => {
    const host = URL.canParse(s.url) ? new URL(s.url).hostname.replace(/^www\./, "") : s.url;
    return s.text.trim() ? [{ id: `S${i + 1}`, host, text: s.text, fromPage: true, title: s.title }] : [];
  });
}

function evidenceOf(texts: readonly SourceText[]): Passage[] {
  return texts.flatMap((t) =>
    passages(t.text).map((text, index) => ({ sourceId: t.id, host: t.host, text, index, relevance: 0, agreement: 0, score: 0 })),
  );
}

/**
 * The synthesis ranks sentences against each other, so results with nothing on the query still
 * offer a "best" sentence: only sentences sharing a content word with the query may answer it.
 */
export function extractiveAnswer(query: string, sources: readonly AnswerSource[], size: "basic" | "advanced"): string | null {
  const wanted = contentTokens(query);
  const report = extractiveReport(evidenceOf(sourceTexts(sources)), query, { findings: SENTENCES[size] * 2, summarySentences: 0 });
  const onQuery = report.findings.filter((f) => [...contentTokens(f.text)].some((t) => wanted.has(t))).slice(0, SENTENCES[size]);
  return onQuery.length ? toResultNumbers(onQuery.map((f) => citeSentence(f.text, f.citations)).join(" ")) : null;
}

export async function writeAnswer(deps: AnswerDeps, query: string, sources: readonly AnswerSource[], size: "basic" | "advanced"): Promise<Answer> {
  const extractive = (): Answer => ({ text: extractiveAnswer(query, sources, size), method: "extractive", tokens: 0 });
  if (!deps.llm) return extractive();
  const texts = sourceTexts(sources);
  if (texts.length === 0) return extractive();
  try {
    const titles = new Map(texts.map((t) => [t.id, t.title ?? ""]));
    const reply = await chat(deps.fetch, deps.llm, synthesisMessages(query, evidenceOf(texts), titles, SENTENCES[size]), deps.timeoutMs);
    const { report } = verifyReport(parseModelReport(reply.content), supportIndex(texts), SENTENCES[size]);
    const summary = report.summary || report.findings.map((f) => citeSentence(f.text, f.citations)).join(" ");
    if (!summary) throw new LlmError("no sentence of the model's answer was supported by the results it cited");
    return { text: toResultNumbers(summary), method: "llm", tokens: reply.tokens };
  } catch (err) {
    const message = err instanceof LlmError ? err.message : "model answer could not be used";
    return { ...extractive(), llmError: message };
  }
}
