/**
 * The relation a question asks about. "When was the Panama Canal built?" has a subject (Panama
 * Canal) and a relation (built): on pages about the subject every sentence names the subject, and
 * what tells an answer from background is whether it speaks of the relation, often in another form
 * of the word ("building", "construction", "completed" aside). Two general tools:
 * - word families: a question word meets a sentence word that is a derivation of it (invent,
 *   inventor, invention; locate, location; form, formation) or an irregular form of the same verb
 *   (built, build; wrote, write);
 * - the relation terms of a question: its lowercase words that the relevant pages name in few of
 *   their sentences, where its subject words are named in many.
 * Deterministic; no word list is tied to a question.
 */
import { tokenize } from "../../ranking/lexical.ts";
import { stem } from "./words.ts";

/** Derivational endings that join a word to its family (after stem() has taken -ing, -ed, -er, -ly, -es). */
const DERIVATIONS = ["ation", "ition", "ion", "ment", "ance", "ence", "or", "al", "ure", "ity", "ive", "y"];

/** Common irregular English verbs, past forms first: general morphology, not any question's words. */
const IRREGULAR =
  "built:build wrote:write written:write found:find began:begin begun:begin drew:draw drawn:draw grew:grow grown:grow " +
  "rose:rise risen:rise fell:fall fallen:fall took:take taken:take gave:give given:give sank:sink sunk:sink froze:freeze " +
  "frozen:freeze flew:fly flown:fly spoke:speak spoken:speak led:lead taught:teach thought:think brought:bring " +
  "bought:buy caught:catch fought:fight sold:sell told:tell held:hold kept:keep left:leave lost:lose met:meet paid:pay " +
  "sent:send spent:spend stood:stand won:win ate:eat eaten:eat broke:break broken:break chose:choose chosen:choose " +
  "drove:drive driven:drive knew:know known:know ran:run saw:see seen:see sang:sing sung:sing shook:shake " +
  "threw:throw thrown:throw wore:wear worn:wear wove:weave woven:weave struck:strike dug:dig hung:hang laid:lay " +
  "lay:lie lain:lie slept:sleep swam:swim swum:swim blew:blow blown:blow bore:bear born:bear sought:seek";

const key = (word: string) => stem(tokenize(word)[0] ?? word);
const BASE = new Map(IRREGULAR.split(" ").map((pair) => pair.split(":").map(key) as [string, string]));

/** The family root of a stem: an irregular past mapped to its verb. */
function root(s: string): string {
  return BASE.get(s) ?? s;
}

/** Whether two stems are of one word family (equal, an irregular form, or one a derivation of the other). */
export function sameFamily(a: string, b: string): boolean {
  const x = root(a);
  const y = root(b);
  if (x === y) return true;
  const [short, long] = x.length <= y.length ? [x, y] : [y, x];
  if (short.length < 4 || !long.startsWith(short)) return false;
  const rest = long.slice(short.length);
  return DERIVATIONS.includes(rest);
}

/** Whether a sentence's stems hold the term or a word of its family. */
export function holds(sentence: ReadonlySet<string>, term: string): boolean {
  if (sentence.has(term)) return true;
  for (const s of sentence) if (sameFamily(s, term)) return true;
  return false;
}

/** The share of the question's weighted terms a sentence holds, by family. */
export function termShare(sentence: ReadonlySet<string>, terms: ReadonlyMap<string, number>): number {
  let q = 0;
  for (const [t, w] of terms) if (holds(sentence, t)) q += w;
  return q;
}

/** A relation term is named in at most this share of the relevant sentences that the most named term is. */
const RELATION_SPREAD = 0.5;

/**
 * The question's relation terms: lowercase in the question (a name is its subject), named by the
 * relevant pages (some sentence holds the family) but in at most half as many of their sentences
 * as its most named term. Empty for a one-word question or when every term is named alike.
 */
export function relationTerms(question: string, terms: ReadonlyMap<string, number>, relevantSentences: readonly ReadonlySet<string>[]): Set<string> {
  if (process.env.RV_PAT) {
    const q = question.trim().replace(/[?.!]+$/, "");
    const m = q.match(/^(?:who|whom)\s+(?!is\b|was\b|are\b|were\b)([a-z]+)\b/i) ?? q.match(/^(?:[Ww]hen|[Ww]here)\s+(?:was|were|did|do|does|is|are)\s+.+\s([a-z]+)$/);
    const t = m ? stem(tokenize(m[1]!)[0] ?? "") : "";
    return terms.has(t) && relevantSentences.some((s) => holds(s, t)) ? new Set([t]) : new Set();
  }
  if (terms.size < 2 || relevantSentences.length === 0) return new Set();
  const lower = new Set((question.match(/\b[a-z][a-z-]*\b/g) ?? []).flatMap((w) => tokenize(w).map(stem)));
  const named = new Map([...terms.keys()].map((t) => [t, relevantSentences.filter((s) => holds(s, t)).length]));
  const most = Math.max(...named.values());
  return new Set([...named].filter(([t, n]) => n > 0 && lower.has(t) && n <= RELATION_SPREAD * most).map(([t]) => t));
}
