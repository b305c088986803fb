/**
 * The bench's two measures, from a research answer and the labels:
 *
 * - citation precision: each (finding, cited source) pair counts once. It is right when the
 *   cited page holds the finding's sentence and that sentence is labelled as answering the
 *   question. A finding merged from near-duplicates cites pages that hold a sentence sharing
 *   at least 60 % of its content words (the rule the synthesis merges by); that sentence must
 *   be labelled as answering too.
 * - key-fact recall: the share of a question's key facts (regular expressions) that some
 *   finding states.
 */
import { containment, contentTokens } from "../../core/answers/words.ts";
import type { BenchPage, BenchQuestion } from "./dataset.ts";

export interface Answer {
  report: { findings: { text: string; citations: string[] }[] };
  sources: { id: string; url: string }[];
}

const norm = (s: string) => s.toLowerCase().replace(/[()[\]]/g, "").replace(/[^\p{L}\p{N}]+/gu, " ").trim();

export interface Scored {
  citations: number;
  correct: number;
  verbatim: number;
  facts: number;
  factsFound: number;
  findings: number;
  /** On-topic pages among the first three sources. */
  onTopicTop3: number;
  wrong: string[];
}

export function score(q: BenchQuestion, answer: Answer, pageOf: (url: string) => BenchPage | undefined): Scored {
  const out: Scored = { citations: 0, correct: 0, verbatim: 0, facts: q.facts.length, factsFound: 0, findings: answer.report.findings.length, onTopicTop3: 0, wrong: [] };
  const urls = new Map(answer.sources.map((s) => [s.id, s.url]));
  for (const f of answer.report.findings) {
    const words = contentTokens(f.text);
    for (const id of f.citations) {
      out.citations++;
      const page = pageOf(urls.get(id) ?? "");
      if (!page) {
        out.wrong.push(`${id} (unknown page): ${f.text}`);
        continue;
      }
      const exact = page.sentences.find((s) => norm(s.text) === norm(f.text));
      const near = exact ?? page.sentences
        .map((s) => ({ s, share: Math.max(containment(words, contentTokens(s.text)), containment(contentTokens(s.text), words)) }))
        .filter((x) => x.share >= 0.6)
        .sort((a, b) => b.share - a.share)[0]?.s;
      if (exact) out.verbatim++;
      if (near?.answers) out.correct++;
      else out.wrong.push(`${id} ${page.on ? "on" : "OFF"}-topic "${page.title}": ${f.text}`);
    }
  }
  const all = answer.report.findings.map((f) => f.text).join("\n");
  out.factsFound = q.facts.filter((re) => re.test(all)).length;
  out.onTopicTop3 = answer.sources.slice(0, 3).filter((s) => pageOf(s.url)?.on).length;
  return out;
}
