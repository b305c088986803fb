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

/** Lowercase word tokens; accents folded, a plural `s` dropped (cheap stemming). */
export function tokenize(text: string): string[] {
  const words = text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.map((w) => (w.length > 3 && w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w));
}

/** Distinct query terms, stopwords dropped unless the query is nothing but stopwords. */
export function queryTerms(query: string): string[] {
  const all = [...new Set(tokenize(query))];
  const content = all.filter((t) => !STOPWORDS.has(t));
  return content.length ? content : all;
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
  const termIndex = new Map(terms.map((t, i) => [t, i]));
  const lengths: number[] = [];
  const freqs = docs.map((doc) => {
    const tf = new Array<number>(terms.length).fill(0);
    let length = 0;
    for (const [text, weight] of [[doc.title, TITLE_WEIGHT], [doc.content, 1]] as const) {
      for (const token of tokenize(text)) {
        length += weight;
        const i = termIndex.get(token);
        if (i !== undefined) tf[i]! += weight;
      }
    }
    lengths.push(length);
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
