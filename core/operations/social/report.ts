/**
 * The extractive report: themes (sources that share salient terms) and an overall summary.
 * Deterministic and without a model: every sentence is quoted from one source and carries
 * its id, inline as `[id]` and in `citations`.
 * Themes: each source's salient terms are its highest TF-IDF words among the kept sources
 * (query words and stopwords left out); the term shared by most unassigned sources seeds the
 * next theme, which takes those sources; what is left forms "other discussion".
 */
import { queryTerms, tokenize } from "../../ranking/lexical.ts";
import { clip } from "../../backends/social/text.ts";
import { sentences } from "./excerpt.ts";

export interface ReportInput {
  id: string;
  title: string;
  /** The text the answer shows for this source (excerpt, or snippet at tier basic). */
  text: string;
  score: number;
}

export interface Citation {
  text: string;
  source_ids: string[];
}

export interface Theme {
  label: string;
  summary: string;
  source_ids: string[];
  citations: Citation[];
}

export interface SocialReport {
  summary: string;
  citations: Citation[];
  themes: Theme[];
}

const STOPWORDS = new Set(
  ("a about after all also am an and any are as at be because been but by can could did do does doing don for from " +
    "get got had has have he her here him his how i if in into is it its just like me more most my no not now of on " +
    "one only or other our out over really she so some such than that the their them then there these they this " +
    "those through to too up us very was way we were what when where which while who why will with would you your " +
    "http https www com org html amp quot gt lt nbsp re comment ask hn show use using used want need know think " +
    "thing make anyone someone something new good time people yes yeah").split(" "),
);

const MAX_THEMES = 5;
const TERMS_PER_SOURCE = 8;
const SENTENCES_PER_THEME = 3;
const SENTENCE_CHARS = 300;

function salientTerms(sources: readonly ReportInput[], exclude: ReadonlySet<string>): string[][] {
  const counts = sources.map((s) => {
    const tf = new Map<string, number>();
    const add = (text: string, w: number) => {
      for (const t of tokenize(text)) {
        if (t.length < 3 || /^\d+$/.test(t) || STOPWORDS.has(t) || exclude.has(t)) continue;
        tf.set(t, (tf.get(t) ?? 0) + w);
      }
    };
    add(s.title, 2);
    add(s.text, 1);
    return tf;
  });
  const df = new Map<string, number>();
  for (const tf of counts) for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const n = sources.length;
  return counts.map((tf) =>
    [...tf]
      .filter(([t]) => df.get(t)! >= 2) // a theme needs a term shared by at least two sources
      .map(([t, f]) => ({ t, w: (1 + Math.log(f)) * Math.log(1 + n / df.get(t)!) }))
      .sort((a, b) => b.w - a.w || (a.t < b.t ? -1 : 1))
      .slice(0, TERMS_PER_SOURCE)
      .map((x) => x.t),
  );
}

/** The source's sentence with most of `terms` (earliest on ties), or its title. */
function bestSentence(source: ReportInput, terms: ReadonlySet<string>): string {
  const candidates = [...sentences(source.text), source.title].filter((s) => s.length >= 20 || s === source.title);
  let best = source.title;
  let bestHits = -1;
  for (const s of candidates) {
    let hits = 0;
    for (const t of new Set(tokenize(s))) if (terms.has(t)) hits++;
    if (hits > bestHits) [best, bestHits] = [s, hits];
  }
  return clip(best, SENTENCE_CHARS);
}

/**
 * Labels show words as written: tokenize() folds plurals ("texas" → "texa"), so each stem is
 * shown as its most frequent lowercase spelling in the sources.
 */
function surfaceForms(sources: readonly ReportInput[]): (stem: string) => string {
  const counts = new Map<string, Map<string, number>>();
  for (const s of sources) {
    for (const word of `${s.title} ${s.text}`.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      const [stem] = tokenize(word);
      if (!stem) continue;
      const forms = counts.get(stem) ?? new Map<string, number>();
      forms.set(word, (forms.get(word) ?? 0) + 1);
      counts.set(stem, forms);
    }
  }
  return (stem) => {
    const forms = counts.get(stem);
    if (!forms) return stem;
    return [...forms].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
  };
}

function cite(text: string, id: string): Citation {
  return { text, source_ids: [id] };
}

function paragraph(citations: readonly Citation[]): string {
  return citations.map((c) => `${/[.!?…"')\]]$/.test(c.text) ? c.text : `${c.text}.`} [${c.source_ids.join(", ")}]`).join(" ");
}

export function buildReport(query: string, sources: readonly ReportInput[]): SocialReport {
  if (!sources.length) return { summary: "", citations: [], themes: [] };
  const qTerms = new Set(queryTerms(query));
  const terms = salientTerms(sources, qTerms);
  const unassigned = new Set(sources.map((_, i) => i));
  const groups: { label: string[]; members: number[] }[] = [];

  while (groups.length < MAX_THEMES && unassigned.size > 1) {
    const coverage = new Map<string, { count: number; weight: number }>();
    for (const i of unassigned) {
      for (const t of terms[i]!) {
        const c = coverage.get(t) ?? { count: 0, weight: 0 };
        c.count++;
        c.weight += sources[i]!.score;
        coverage.set(t, c);
      }
    }
    const seed = [...coverage].filter(([, c]) => c.count >= 2)
      .sort((a, b) => b[1].count - a[1].count || b[1].weight - a[1].weight || (a[0] < b[0] ? -1 : 1))[0];
    if (!seed) break;
    const members = [...unassigned].filter((i) => terms[i]!.includes(seed[0]));
    // A second label word: the term most of the theme's sources share besides the seed.
    const second = new Map<string, number>();
    for (const i of members) for (const t of terms[i]!) if (t !== seed[0]) second.set(t, (second.get(t) ?? 0) + 1);
    const next = [...second].filter(([, c]) => c >= 2).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
    groups.push({ label: next ? [seed[0], next[0]] : [seed[0]], members });
    for (const i of members) unassigned.delete(i);
  }
  if (unassigned.size) groups.push({ label: [], members: [...unassigned] });

  const spell = surfaceForms(sources);
  const themes: Theme[] = groups.map((g) => {
    const members = [...g.members].sort((a, b) => sources[b]!.score - sources[a]!.score || a - b);
    const focus = new Set([...qTerms, ...g.label]);
    const citations = members.slice(0, SENTENCES_PER_THEME).map((i) => cite(bestSentence(sources[i]!, focus), sources[i]!.id));
    return {
      label: g.label.length ? g.label.map(spell).join(", ") : groups.length > 1 ? "other discussion" : "discussion",
      summary: paragraph(citations),
      source_ids: members.map((i) => sources[i]!.id),
      citations,
    };
  });

  // The summary: the lead sentence of each theme, in theme order.
  const citations = themes.map((t) => t.citations[0]!).filter(Boolean);
  return { summary: paragraph(citations), citations, themes };
}
