/**
 * Lexical match of a result's title and snippet to the query: BM25 (Robertson & Zaragoza,
 * "The Probabilistic Relevance Framework", 2009) over the merged candidates as the corpus,
 * with the title counted twice (a BM25F-style field weight) and the sum divided by its
 * maximum so the score lands in [0, 1).
 */

const STOPWORDS = new Set(
  ("a an and are as at be by for from how i in is it of on or that the this to was what when where which who why " +
    "with do does did can you your my we our").split(" "),
);

const NON_ASCII = /[^\x00-\x7f]/;

/** Lowercase word tokens; accents folded, a plural `s` dropped (cheap stemming). */
export function tokenize(text: string): string[] {
  // Unicode normalisation and \p{…} classes dominate the merge's cost; most snippets are ASCII.
  const words = NON_ASCII.test(text)
    ? text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase().match(/[\p{L}\p{N}]+/gu)
    : text.toLowerCase().match(/[a-z0-9]+/g);
  if (!words) return [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss")) words[i] = w.slice(0, -1);
  }
  return words;
}

/** Distinct query terms, stopwords dropped unless the query is nothing but stopwords. */
export function queryTerms(query: string): string[] {
  const all = [...new Set(tokenize(query))];
  const content = all.filter((t) => !STOPWORDS.has(t));
  return content.length ? content : all;
}

/**
 * Adds `weight` to `tf[i]` for each occurrence of term i in `text` and returns the text's
 * weighted length. ASCII text is scanned in place, cutting out only words whose length could
 * match a term (a term, or a term plus plural `s`), because tokenising every word of every
 * snippet was the merge's main cost (bench/search-fanout/merge-bench.ts).
 */
function termCounter(terms: readonly string[]): (text: string, weight: number, tf: number[]) => number {
  const index = new Map(terms.map((t, i) => [t, i]));
  const maxLength = Math.max(...terms.map((t) => t.length)) + 1;
  const candidate = new Uint8Array(maxLength + 1);
  for (const t of terms) candidate[t.length] = candidate[t.length + 1] = 1;
  const add = (word: string, weight: number, tf: number[]) => {
    const stemmed = word.length > 3 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word;
    const i = index.get(stemmed);
    if (i !== undefined) tf[i]! += weight;
  };

  return (text, weight, tf) => {
    if (NON_ASCII.test(text)) {
      const tokens = tokenize(text);
      for (const token of tokens) {
        const i = index.get(token);
        if (i !== undefined) tf[i]! += weight;
      }
      return tokens.length * weight;
    }
    const lower = text.toLowerCase();
    let words = 0;
    let start = -1;
    for (let p = 0; p <= lower.length; p++) {
      const c = p < lower.length ? lower.charCodeAt(p) : 32;
      const alnum = (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
      if (alnum) {
        if (start < 0) start = p;
      } else if (start >= 0) {
        words++;
        const len = p - start;
        if (len <= maxLength && candidate[len]) add(lower.slice(start, p), weight, tf);
        start = -1;
      }
    }
    return words * weight;
  };
}

export interface LexicalDoc {
  title: string;
  content: string;
}

const K1 = 1.2;
const B = 0.75;
const TITLE_WEIGHT = 2;

/** One lexical score in [0, 1) per document, in input order. */
export function lexicalScores(query: string, docs: readonly LexicalDoc[]): number[] {
  const terms = queryTerms(query);
  if (terms.length === 0 || docs.length === 0) return docs.map(() => 0);

  // Weighted term frequencies per document, restricted to query terms.
  const counter = termCounter(terms);
  const lengths: number[] = [];
  const freqs = docs.map((doc) => {
    const tf = new Array<number>(terms.length).fill(0);
    lengths.push(counter(doc.title, TITLE_WEIGHT, tf) + counter(doc.content, 1, tf));
    return tf;
  });

  const n = docs.length;
  const avgLength = lengths.reduce((a, b) => a + b, 0) / n || 1;
  // BM25's idf with +1 inside the log stays positive even for a term in every candidate.
  const idf = terms.map((_, i) => {
    const df = freqs.reduce((count, tf) => count + (tf[i]! > 0 ? 1 : 0), 0);
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  });
  const idfSum = idf.reduce((a, b) => a + b, 0);

  return freqs.map((tf, d) => {
    const norm = K1 * (1 - B + (B * lengths[d]!) / avgLength);
    let score = 0;
    for (let i = 0; i < terms.length; i++) {
      const f = tf[i]!;
      // Saturated tf divided by its limit (k1 + 1): each term contributes at most its idf.
      if (f > 0) score += (idf[i]! * (f * (K1 + 1))) / (f + norm) / (K1 + 1);
    }
    return score / idfSum;
  });
}
