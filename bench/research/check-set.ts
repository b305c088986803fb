/**
 * Checks a split of the research question set against the writing rules of set/README.md, for
 * whoever writes a new split: every key fact is stated by at least one labelled answer and by no
 * unlabelled sentence of that question (off-topic pages included), and length says nothing (the
 * mean words of answers, of on-topic pages' background sentences and of off-topic sentences).
 * Words are split on spaces, the `* ` label is not counted and broken pages are left out, as the
 * README's length figures are. It reads the set's files only; it runs nothing of Quarry.
 *
 *   npx tsx bench/research/check-set.ts holdout12
 *
 * Prints one line per question and the split's length figures; exits 1 if a fact breaks the rule.
 */
import { loadQuestions } from "./dataset.ts";

const split = process.argv[2];
const questions = loadQuestions().filter((q) => q.split === split);
if (!split || !questions.length) {
  console.error(`usage: npx tsx bench/research/check-set.ts <split>; no questions in split "${split ?? ""}"`);
  process.exit(2);
}

const words = (s: string) => s.split(" ").filter(Boolean).length;
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const lengths = { answers: [] as number[], background: [] as number[], offTopic: [] as number[] };
let faults = 0;

for (const q of questions) {
  const served = q.pages.filter((p) => !p.broken);
  for (const p of served) {
    for (const s of p.sentences) {
      const bucket = s.answers ? lengths.answers : p.on ? lengths.background : lengths.offTopic;
      bucket.push(words(s.text));
    }
  }
  const all = q.pages.flatMap((p) => p.sentences.map((s) => ({ ...s, page: p.title })));
  const problems: string[] = [];
  for (const f of q.facts) {
    const answers = all.filter((s) => s.answers && f.test(s.text)).length;
    if (!answers) problems.push(`fact ${f} is stated by no labelled answer`);
    for (const s of all.filter((s) => !s.answers && f.test(s.text))) problems.push(`fact ${f} in an unlabelled sentence of "${s.page}": ${s.text}`);
  }
  const on = q.pages.filter((p) => p.on).length;
  const broken = q.pages.filter((p) => p.broken).length;
  const labelled = all.filter((s) => s.answers).length;
  console.log(`${q.id} ${q.pages.length} pages, ${on} on-topic, ${broken} broken, ${labelled} answers, ${q.facts.length} facts: ${q.question}`);
  for (const p of problems) console.log(`  ${p}`);
  faults += problems.length;
}

const fmt = (xs: number[]) => `${mean(xs).toFixed(1)} words (${xs.length} sentences)`;
console.log(`\n${split}: answers ${fmt(lengths.answers)}, background of on-topic pages ${fmt(lengths.background)}, off-topic ${fmt(lengths.offTopic)}`);
if (faults) {
  console.log(`${faults} fact problem(s)`);
  process.exit(1);
}
