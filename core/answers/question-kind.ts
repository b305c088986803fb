/**
 * The kind of question asked (why, how, when, who, where, define, compare) and the kind of
 * answer each asks for beyond the question's words: a cause for "why", the asked event's date for
 * "when", the act rather than a life's background for "who invented". Used by relevance.ts to
 * score sentences; deterministic.
 */

import { ASKS_AMOUNT } from "./answer-form.ts";
import { stems } from "./words.ts";

/**
 * Words that say what kind of answer is wanted rather than what it is about: "difference" in "what
 * is the difference between a meteor and a meteorite", "causes" in "what causes rust", "work" in
 * "how do headphones work", "mean" in "what does X mean". Pages on the question seldom use them and
 * pages off it can ("How do hearing aids work?"), so they are no part of the question's terms
 * (relevance.ts). Only in those places: "work" in "how does remote work affect sleep" is its subject.
 */
const FORM_PHRASES = [
  /^(what|which)\s+(causes|caused|cause)\b/i,
  /\b(the\s+)?(main\s+)?(causes?|reasons?)\s+(of|for)\b/i,
  /\b(the\s+)?differences?\s+between\b/i,
  /\bdiffers?\s+from\b/i,
  /\b(work|works)\s*[?.!]*\s*$/i,
  /\b(mean|means)\s*[?.!]*\s*$/i,
  /\b(meaning|definition)\s+of\b/i,
  // A yes-no question's hedges: "is it true that goldfish…", "do goldfish really…".
  /^(is|are|was|were)\s+it\s+(true|a myth|a fact|right|correct)\s+that\b/i,
  /\b(really|actually|truly)\b/i,
  // An amount's question words: "how many bones", "how long do elephants live" (not "how long is the Nile": its length).
  /^how\s+(many|much)\b/i,
  /^how\s+long(?=\s+(do|does|did|will|can|could|should|would)\b)/i,
];

/** The question's content stems without its form words (all of them when nothing else is left). */
export function subjectStems(question: string): string[] {
  const all = [...stems(question)];
  const subject = [...stems(FORM_PHRASES.reduce((q, re) => q.replace(re, " "), question))];
  return subject.length ? subject : all;
}

/** What answerCue needs of the question model (relevance.ts). */
export interface CueModel {
  kind: QuestionKind;
  /** A "who" question about the person (who was X), not about an act (who invented X). */
  person: boolean;
  /** Topic stems shared by the relevant documents. */
  topic: ReadonlyMap<string, number>;
}

export type QuestionKind = "why" | "how" | "when" | "who" | "where" | "define" | "compare" | "other";

export function questionKind(question: string): QuestionKind {
  const q = question.toLowerCase().trim();
  if (/\b(vs\.?|versus|compared? (to|with)|difference between|differ)\b/.test(q) || /^(is|are|which)\b.*\bor\b/.test(q)) return "compare";
  if (/^(why|what (causes|caused|makes|made|led))\b/.test(q)) return "why";
  if (/^(when|what year|in what year)\b/.test(q)) return "when";
  if (/^(who|whom|whose)\b/.test(q)) return "who";
  if (/^where\b/.test(q)) return "where";
  // "How many", "how long": an amount, not a process (answer-form.ts weighs the amount).
  if (ASKS_AMOUNT.test(q)) return "other";
  if (/^how\b/.test(q)) return "how";
  if (/^(what (is|are|was|were|does)|define|definition|meaning of)\b/.test(q)) return "define";
  return "other";
}

/** Words that tend to carry the kind of answer a question asks for ("when" and "who" are judged apart: answerCue). */
const CUES: Record<QuestionKind, RegExp> = {
  why: /\b(because|cause[sd]?|due to|reason|result(s|ed)? in|leads? to|so that|therefore|as a result|which is why)\b/i,
  how: /\b(by|through|then|when|turns?|converts?|produces?|forms?|uses?|works?|process)\b/i,
  when: /$^/,
  who: /\b(was an?|is an?|invented|wrote|written|painted|founded|discovered|credited|born)\b/i,
  where: /\b(coast|region|mountains?|forests?|north|south|east|west|northern|southern|eastern|western|central|lies|located|native to|found in)\b/i,
  define: /\b(is an?|are|refers? to|means?|defined|known as|called|kind of|type of)\b/i,
  compare: /\b(than|whereas|while|unlike|compared|more|less|higher|lower|twice|half)\b/i,
  other: /$^/,
};

/**
 * A year, a decade or a century: what a "when" answer is made of. Years of the first millennium
 * have three digits (AD 476); a three-digit number counts as a date only where the relevant
 * sources agree on it (answerCue reads it from the topic vocabulary).
 */
const DATE = /^(1[0-9]{3}|20[0-9]{2}|[1-9][0-9]{2}|[0-9]{3,4}s|century|centuri|decad)$/;

/** A date in running text: a year, or a day of a month. */
const DATED = /\b(1[0-9]{3}|20[0-9]{2}|january|february|march|april|may|june|july|august|september|october|november|december)\b|\b(AD|BC|BCE|CE) ?[0-9]{1,4}\b|\b[0-9]{1,4} ?(AD|BC|BCE|CE)\b|\b(in|year|since|until|by) [1-9][0-9]{1,2}\b(?! ?(%|per|km|kilo|met|mil|degree|hour|minute|second|day|year|people|times))/i;

/** A life's background: what "who invented X" does not ask about (it asks about the act). */
const LIFE = /\b(was born|born in|died|grew up|childhood|married|his early|her early)\b/i;

/** "who was X" asks about the person; "who invented X" asks about an act, and its answer names it. */
export function asksForPerson(question: string): boolean {
  return /^(who|whom|whose)\s+(is|was|are|were)\b/i.test(question.trim());
}

/** Bonus for the kind of answer the question asks for (answerCue), and the penalties for background. */
const CUE = 0.05;
const DATE_ELSEWHERE = 0.2;
const LIFE_PENALTY = 0.1;

/**
 * The kind of answer the question asks for, beyond its words. A "when" question is answered by
 * the date of the asked event, not by any date on the page: the cue is a year the relevant
 * sources agree on (the topic vocabulary), in a sentence that names the question or more of
 * what the sources say about it; a launch date in a page about a landing is background. A "who"
 * question about an act (who invented, painted, wrote) is not answered by where the person was
 * born: a life's background counts against such a sentence unless it names the act.
 */
export function answerCue(sentence: string, s: ReadonlySet<string>, q: number, model: CueModel): number {
  if (model.kind === "when") {
    let agreed = false;
    let topicWords = 0;
    for (const t of s) {
      if (!model.topic.has(t)) continue;
      if (DATE.test(t)) agreed = true;
      else topicWords++;
    }
    if (agreed) return q > 0 || topicWords >= 2 ? CUE : 0;
    // A date the sources do not agree on, in a sentence that does not name the question: another event's date.
    return q === 0 && DATED.test(sentence) ? -DATE_ELSEWHERE : 0;
  }
  if (model.kind === "who" && !model.person) {
    if (q === 0 && LIFE.test(sentence)) return -LIFE_PENALTY;
    return CUES.who.test(sentence) && !LIFE.test(sentence) ? CUE : 0;
  }
  return CUES[model.kind].test(sentence) ? CUE : 0;
}
