/**
 * Research evidence bench: passage ranking + extractive synthesis (core/operations/research)
 * over 20 real pages of the article-extraction benchmark, against a naive baseline in the same
 * run (every sentence scored by its raw count of query terms, top five, no dedup).
 *
 * Each report gets one target page (its question is the page's URL slug) and four other
 * pages, so a report must find the page that answers and leave the others out. Measured:
 * time per report, on-target share of findings, redundancy among findings (pairs where one
 * holds ≥ 60 % of the other's words), distinct sources cited.
 *
 *   npx tsx bench/research/run.ts
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { extractContent } from "../../core/extract/extract-content.ts";
import { containment, contentTokens, rankPassages, type SourceText } from "../../core/operations/research/evidence.ts";
import { planSubQueries } from "../../core/operations/research/plan.ts";
import { extractiveReport, splitSentences, type Finding } from "../../core/operations/research/synthesis.ts";
import { TIER_PLAN } from "../../core/operations/research/tiers.ts";
import { queryTerms, tokenize } from "../../core/ranking/lexical.ts";
import { benchmarkPage, SHARED } from "../../tests/helpers/page-server.ts";
import { loadLibraries } from "../../core/lazy.ts";

await loadLibraries();

const truth = JSON.parse(readFileSync(join(SHARED, "bench/article-extraction/ground-truth.json"), "utf8")) as Record<string, { url: string }>;
const slugWords = (url: string) => (new URL(url).pathname.split("/").filter((s) => /[a-z]-[a-z]/i.test(s)).pop() ?? "").replace(/\.[a-z]+$/i, "").replace(/[-_]+/g, " ").replace(/\b[0-9a-f]{6,}\b|\b\d+\b/gi, "").trim();
// Pages whose URL slug makes a question of at least four words.
const ids = Object.keys(truth).sort().filter((id) => slugWords(truth[id]!.url).split(" ").length >= 4).slice(0, 20);
const pages = ids.map((id, i) => {
  const p = benchmarkPage(id);
  const text = extractContent(p.html, p.truth.url, { onlyMainContent: true }).text;
  return { id: `S${i + 1}`, host: new URL(p.truth.url).host, text, fromPage: true, question: slugWords(p.truth.url) };
});

function naive(sources: SourceText[], question: string, n: number): Finding[] {
  const terms = new Set(queryTerms(question));
  const all = sources.flatMap((s) => s.text.split(/\n\s*\n/).flatMap(splitSentences).map((text) => ({ text, id: s.id })));
  return all
    .map((s, i) => ({ ...s, i, score: tokenize(s.text).filter((t) => terms.has(t)).length }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, n)
    .map((s) => ({ text: s.text, citations: [s.id] }));
}

interface Row { ms: number; onTarget: number; redundant: number; sources: number; findings: number }
const stats = { ours: [] as Row[], naive: [] as Row[] };
const tier = TIER_PLAN.summary;

function measure(findings: Finding[], target: string, ms: number): Row {
  const toks = findings.map((f) => contentTokens(f.text));
  let pairs = 0;
  let dup = 0;
  for (let i = 0; i < toks.length; i++) for (let j = i + 1; j < toks.length; j++) {
    pairs++;
    if (Math.max(containment(toks[i]!, toks[j]!), containment(toks[j]!, toks[i]!)) >= 0.6) dup++;
  }
  return {
    ms,
    onTarget: findings.length ? findings.filter((f) => f.citations.includes(target)).length / findings.length : 0,
    redundant: pairs ? dup / pairs : 0,
    sources: new Set(findings.flatMap((f) => f.citations)).size,
    findings: findings.length,
  };
}

const REPEAT = 5;
for (let r = 0; r < pages.length; r++) {
  const target = pages[r]!;
  const corpus = [0, 1, 2, 3, 4].map((k) => pages[(r + k * 3) % pages.length]!);
  // The target page plus its near-duplicate (the same page again under another site), as a real result list often holds.
  const sources: SourceText[] = [...corpus, { ...target, id: "S99", host: "mirror.example" }];
  const subs = planSubQueries(target.question, "summary");
  let report = extractiveReport([], "", { findings: 0, summarySentences: 0 });
  let t0 = performance.now();
  for (let k = 0; k < REPEAT; k++) {
    const evidence = rankPassages(sources, target.question, subs, { limit: tier.passages, perHost: tier.perHost });
    report = extractiveReport(evidence, target.question, { findings: tier.findings, summarySentences: tier.summarySentences });
  }
  const oursMs = (performance.now() - t0) / REPEAT;
  let base: Finding[] = [];
  t0 = performance.now();
  for (let k = 0; k < REPEAT; k++) base = naive(sources, target.question, tier.findings);
  const naiveMs = (performance.now() - t0) / REPEAT;
  const norm = (f: Finding[]) => f.map((x) => ({ ...x, citations: x.citations.map((c) => (c === "S99" ? target.id : c)) }));
  stats.ours.push(measure(norm(report.findings), target.id, oursMs));
  stats.naive.push(measure(norm(base), target.id, naiveMs));
}

const avg = (rows: Row[], k: keyof Row) => rows.reduce((s, r) => s + r[k], 0) / rows.length;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const line = (name: string, rows: Row[]) =>
  `| ${name} | ${median(rows.map((r) => r.ms)).toFixed(2)} | ${Math.max(...rows.map((r) => r.ms)).toFixed(2)} | ${(100 * avg(rows, "onTarget")).toFixed(0)} % | ${(100 * avg(rows, "redundant")).toFixed(1)} % | ${avg(rows, "sources").toFixed(2)} | ${avg(rows, "findings").toFixed(1)} |`;
const table = [
  "| method | median ms / report | max ms | findings citing the target page | redundant finding pairs | distinct sources cited | findings |",
  "|---|---|---|---|---|---|---|",
  line("research (BM25 passages + agreement + dedup)", stats.ours),
  line("naive (raw query-term count, top 5)", stats.naive),
].join("\n");
console.log(table);
const md = `## Research evidence bench (bench/research/run.ts)

${pages.length} real pages from the article-extraction benchmark; each report has a target page (question = its URL slug),
four other pages and a copy of the target under another host (a mirror), tier \`summary\` (≤ 16 passages, ≤ 3 per site,
5 findings). Page extraction is done before timing; times are the mean of ${REPEAT} runs per report, Node ${process.version}.

${table}

Redundant pairs: two findings where one holds ≥ 60 % of the other's content words (the mirror makes the naive list repeat
itself; the research synthesis merges such sentences into one finding citing both). Citations of the mirror count as the target.
`;
writeFileSync(new URL("./RESULTS.part.md", import.meta.url), md);
