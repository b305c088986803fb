/**
 * What a page is about, judged from its title and how its text uses the question's words. Sharing
 * the question's words is not being about its subject: two kinds of page pass every word-count
 * test and are still about something else.
 *
 * - A sibling: its title asks the same kind of question about another subject ("Why do we cough?"
 *   beside "Why do we sneeze?", "Who was Kublai Khan?" beside "Who was Genghis Khan?"). Its text
 *   has the answer's form and much of the on-topic pages' vocabulary, but it answers its own title.
 * - A namesake: its title joins a question word to a word the question lacks, and the text keeps
 *   that pairing ("Kangaroo Island" beside "where do kangaroos live", "fjord cruise", "Fig Newtons"):
 *   the page is about the compound, and the question's word is part of a name there.
 *
 * - A thing named after the person asked about ("who was Isaac Newton": Fig Newtons, the newton as
 *   a unit): its text never speaks of a person at all.
 *
 * The first two are read from the title because a page names its own subject there; the text only confirms
 * (a title "Zebra facts" whose text never says "zebra facts" is about zebras). English word order,
 * deterministic.
 */
import { tokenize } from "../ranking/lexical.ts";
import { asksForPerson, questionKind, subjectStems } from "./question-kind.ts";
import { docSentences } from "./sentences.ts";
import { stem, TOPIC_STOP } from "./words.ts";

/**
 * Share of its relevance prior a page keeps when its title puts it on another subject. Low enough
 * that such a page falls under the relevance gate unless the other pages are as doubtful.
 */
export const OTHER_SUBJECT = 0.3;

/** A page title without the site's name after a separator ("Fjords | Visit Norway" → "Fjords"). */
export function ownTitle(title: string): string {
  const parts = title.split(/\s+[|·•–—-]\s+/);
  return parts.length > 1 ? parts.slice(0, -1).join(" - ") : title;
}

/** The title's words in order, content stems in place and null for the rest (so adjacency is kept). */
function sequence(text: string): (string | null)[] {
  return tokenize(text).map((t) => (t.length > 2 && !TOPIC_STOP.has(t) && !TOPIC_STOP.has(`${t}s`) ? stem(t) : null));
}

/** A title that asks a question, or names a task as "how to" does (a question without its mark). */
const ASKS = /\?\s*$|^how to\b/i;

/** The title asks the question's kind of question about another subject. */
function sibling(question: string, subject: ReadonlySet<string>, title: string): boolean {
  if (!ASKS.test(title) || questionKind(title) !== questionKind(question)) return false;
  const own = new Set(subjectStems(title));
  return [...subject].some((t) => !own.has(t)) && [...own].some((t) => !subject.has(t));
}

/** The title pairs a question word with another word, and the text uses that word mostly in that pairing. */
function namesake(subject: ReadonlySet<string>, title: string, text: string): boolean {
  const head = sequence(title);
  const body = docSentences(text).map(sequence);
  return head.some((t, i) => {
    if (!t || !subject.has(t)) return false;
    {
      const side = 1;
      const other = head[i + side];
      if (!other || subject.has(other)) return false;
      let uses = 0;
      let paired = 0;
      for (const words of body) {
        words.forEach((w, k) => {
          if (w !== t) return;
          uses++;
          if (words[k + side] === other) paired++;
        });
      }
      return paired >= 1 && paired * 2 >= uses;
    }
  });
}

/** "Who is/was X" asks about one person ("who are Radiohead" may ask about a band). */
const ONE_PERSON = /^(who|whom)\s+(is|was)\b/i;
/** Words that only a text about a person uses: its pronouns, birth and death. */
const PERSON = /\b(he|she|his|her|him|himself|herself|born|died)\b/i;

/**
 * Share of its relevance a page keeps for what it is about: 1, or OTHER_SUBJECT for a sibling, a
 * namesake, or, for "who was X", a page that never speaks of a person (a unit, a cookie, a hotel
 * named after X).
 */
export function subjectFit(question: string, title: string, text: string): number {
  if (asksForPerson(question) && ONE_PERSON.test(question.trim()) && !PERSON.test(text)) return OTHER_SUBJECT;
  const own = ownTitle(title).trim();
  if (!own) return 1;
  const subject = new Set(subjectStems(question));
  return sibling(question, subject, own) || namesake(subject, own, text) ? OTHER_SUBJECT : 1;
}
