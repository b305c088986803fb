/**
 * Word lists and token sets shared by ranking (relevance.ts, evidence.ts) and synthesis: one
 * stopword list, so what counts as a content word is the same at every stage.
 */
import { tokenize } from "../ranking/lexical.ts";

/** Function words and fillers that say nothing about what a sentence is about. */
const STOP_WORDS =
  "a about above after again against all also am an and any are as at be because been before being below between both but by can " +
  "could did do does doing down during each few for from further had has have having he her here hers herself him himself his how i " +
  "if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours out over own same she " +
  "should so some such than that the their theirs them themselves then there these they this those through to too under until up " +
  "very was we were what when where which while who whom why will with would you your yours said says say one two also like get got " +
  "new year just may might must much many well even still back";

/**
 * Common verbs and nouns that carry no topic ("make", "way", "happen"): left out of a document's
 * topic vocabulary, but kept when comparing two sentences' wording (evidence.ts).
 */
const VAGUE_WORDS = "make made use used often usually every thing things way happen happened happens";

export const STOP: ReadonlySet<string> = new Set(STOP_WORDS.split(" "));
export const TOPIC_STOP: ReadonlySet<string> = new Set([...STOP, ...VAGUE_WORDS.split(" ")]);

/** Distinct content words of a text (stemmed as lexical.ts does, stopwords and 1–2 letter words dropped). */
export function contentTokens(text: string): Set<string> {
  return new Set(tokenize(text).filter((t) => t.length > 2 && !STOP.has(t)));
}

/** Share of `a`'s words found in `b` (0 when `a` is empty). */
export function containment(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0) return 0;
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  return shared / a.size;
}

/** Cosine of two word sets (0 when either is empty). */
export function setCosine(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const t of small) if (large.has(t)) shared++;
  return shared / Math.sqrt(a.size * b.size);
}

/** A light stemmer on top of lexical.ts's plural folding, so "scattered", "scattering" and "scatter" meet. */
export function stem(token: string): string {
  let t = token;
  for (const suffix of ["ing", "ed", "ly", "es", "er"]) {
    if (t.length - suffix.length >= 4 && t.endsWith(suffix)) {
      t = t.slice(0, -suffix.length);
      break;
    }
  }
  if (t.length > 4 && t.endsWith("e")) t = t.slice(0, -1);
  return t;
}

/** Distinct content stems of a text. */
export function stems(text: string): Set<string> {
  // lexical.ts folds a final "s" ("this" → "thi"), so stopwords are checked in both forms.
  return new Set(tokenize(text).filter((t) => t.length > 2 && !TOPIC_STOP.has(t) && !TOPIC_STOP.has(`${t}s`)).map(stem));
}
