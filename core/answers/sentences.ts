/** Sentence splitting shared by ranking and synthesis. */
const ABBREVIATIONS = /\b(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|Sen|Rep|Gov|Gen|Col|Lt|Sgt|Inc|Ltd|Co|Corp|vs|etc|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|No|U\.S|U\.K|e\.g|i\.e)\.$/;

/** Sentences of a passage; a period after a common abbreviation does not end one. */
export function splitSentences(text: string): string[] {
  const parts = text.replace(/\s+/g, " ").trim().split(/(?<=[.!?]["”’']?)\s+(?=["“‘(]?[A-Z0-9])/);
  const out: string[] = [];
  for (const part of parts) {
    const prev = out[out.length - 1];
    if (prev !== undefined && (ABBREVIATIONS.test(prev) || /\b[A-Z]\.$/.test(prev))) out[out.length - 1] = `${prev} ${part}`;
    else out.push(part);
  }
  return out.map((s) => s.trim()).filter(Boolean);
}

/** A sentence that begins with a personal pronoun, so speaks of what an earlier one named. */
const PRONOUN = /^(He|She|It|They|His|Her|Its|Their)\b/;

/**
 * What pronoun-led sentences take from the sentence before them: "He was born in 1856 in Smiljan"
 * after "Nikola Tesla was an inventor" is about Tesla, though it names nothing itself. For each
 * sentence whose own value is 0, the value of the sentence that began its run of pronouns (0 when
 * nothing before it named anything); the others get 0.
 */
export function referBack(texts: readonly string[], values: readonly number[]): number[] {
  let last = 0;
  return texts.map((text, k) => {
    const own = values[k]!;
    const back = own === 0 && PRONOUN.test(text) ? last : 0;
    last = own > 0 ? own : back;
    return back;
  });
}

/** A text's sentences, paragraph by paragraph (a heading never runs into the next sentence). */
export function docSentences(text: string): string[] {
  return text.split(/\n\s*\n/).flatMap((p) => splitSentences(p));
}
