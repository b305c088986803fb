/**
 * A probe of one idea (brief "res2", bench/RESULTS.md): does the relation a question asks about
 * ("built" in "When was the Panama Canal built?") tell answers from the background sentences of
 * on-topic pages? For each question with a relation term, it counts the labelled sentences of the
 * on-topic pages that hold the term (exactly, or by word family: a derivation such as invent /
 * invention / inventor, or an irregular form such as built / build). Reads the set's pages
 * directly, not through Quarry. The same idea as a ranking rule was measured and dropped; its code
 * is commit 035545d of branch res2 (switches RV_PAT, RV_REL, RV_FAM, RV_W, RV_BONUS).
 *
 *   npx tsx bench/research/relation-probe.ts [splits, comma-separated; default: every split but holdout12, the fresh one]
 */
import { loadQuestions } from "./dataset.ts";
import { tokenize } from "../../core/ranking/lexical.ts";
import { stem, stems } from "../../core/answers/words.ts";
import { subjectStems } from "../../core/answers/question-kind.ts";

const DERIVATIONS = ["ation", "ition", "ion", "ment", "ance", "ence", "or", "al", "ure", "ity", "ive", "y"];
const IRREGULAR =
  "built:build wrote:write written:write found:find began:begin begun:begin drew:draw drawn:draw grew:grow grown:grow " +
  "rose:rise risen:rise fell:fall fallen:fall took:take taken:take gave:give given:give sank:sink sunk:sink froze:freeze " +
  "frozen:freeze flew:fly flown:fly spoke:speak spoken:speak led:lead taught:teach thought:think brought:bring " +
  "bought:buy caught:catch fought:fight sold:sell told:tell held:hold kept:keep left:leave lost:lose met:meet paid:pay " +
  "sent:send spent:spend stood:stand won:win ate:eat eaten:eat broke:break broken:break chose:choose chosen:choose " +
  "drove:drive driven:drive knew:know known:know ran:run saw:see seen:see sang:sing sung:sing shook:shake " +
  "threw:throw thrown:throw wore:wear worn:wear wove:weave woven:weave struck:strike dug:dig hung:hang laid:lay " +
  "lay:lie lain:lie slept:sleep swam:swim swum:swim blew:blow blown:blow bore:bear born:bear sought:seek";
const key = (w: string) => stem(tokenize(w)[0] ?? w);
const BASE = new Map(IRREGULAR.split(" ").map((p) => p.split(":").map(key) as [string, string]));
const root = (s: string) => BASE.get(s) ?? s;

function sameFamily(a: string, b: string): boolean {
  const [x, y] = [root(a), root(b)];
  if (x === y) return true;
  const [short, long] = x.length <= y.length ? [x, y] : [y, x];
  return short.length >= 4 && long.startsWith(short) && DERIVATIONS.includes(long.slice(short.length));
}
const holds = (s: ReadonlySet<string>, t: string, family: boolean) => s.has(t) || (family && [...s].some((x) => sameFamily(x, t)));

/** "who VERB X" (not is/was), "when/where was/did/do X VERB": the verb, when it is one of the question's terms. */
function byPattern(question: string, terms: Set<string>): Set<string> {
  const q = question.trim().replace(/[?.!]+$/, "");
  const m = q.match(/^(?:who|whom)\s+(?!is\b|was\b|are\b|were\b)([a-z]+)\b/i) ?? q.match(/^(?:[Ww]hen|[Ww]here)\s+(?:was|were|did|do|does|is|are)\s+.+\s([a-z]+)$/);
  const t = m ? stem(tokenize(m[1]!)[0] ?? "") : "";
  return terms.has(t) ? new Set([t]) : new Set();
}

/** Lowercase question terms that the on-topic sentences name at most half as often as the most named term. */
function bySpread(question: string, terms: Set<string>, sentences: ReadonlySet<string>[]): Set<string> {
  if (terms.size < 2) return new Set();
  const lower = new Set((question.match(/\b[a-z][a-z-]*\b/g) ?? []).flatMap((w) => tokenize(w).map(stem)));
  const named = new Map([...terms].map((t) => [t, sentences.filter((s) => holds(s, t, true)).length]));
  const most = Math.max(...named.values());
  return new Set([...named].filter(([t, n]) => n > 0 && lower.has(t) && n <= 0.5 * most).map(([t]) => t));
}

const all = loadQuestions();
const splits = process.argv[2]?.split(",") ?? [...new Set(all.map((q) => q.split))].filter((s) => s !== "holdout12");
for (const mode of ["pattern", "spread"] as const) {
  for (const family of [false, true]) {
    const c = { questions: 0, answersHold: 0, answers: 0, backgroundHold: 0, background: 0 };
    for (const q of all.filter((x) => splits.includes(x.split))) {
      const terms = new Set(subjectStems(q.question));
      const on = q.pages.filter((p) => p.on && !p.broken).flatMap((p) => p.sentences.map((s) => ({ st: stems(s.text), answers: s.answers })));
      const relation = mode === "pattern" ? byPattern(q.question, terms) : bySpread(q.question, terms, on.map((x) => x.st));
      if (!relation.size || !on.some((x) => [...relation].some((t) => holds(x.st, t, true)))) continue;
      c.questions++;
      for (const x of on) {
        const h = [...relation].some((t) => holds(x.st, t, family));
        if (x.answers) (c.answers++, h && c.answersHold++);
        else (c.background++, h && c.backgroundHold++);
      }
    }
    const share = (a: number, b: number) => `${a}/${b} (${(a / (b || 1)).toFixed(2)})`;
    console.log(`${mode}, ${family ? "by family" : "exact"}: ${c.questions} questions; answers holding the relation ${share(c.answersHold, c.answers)}, background sentences of on-topic pages holding it ${share(c.backgroundHold, c.background)}`);
  }
}
