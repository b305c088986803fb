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
