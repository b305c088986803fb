/**
 * A page's `summary` format (scrape, Firecrawl's `summary`): written by the model at
 * QUARRY_LLM_URL when one is configured, else extractive and deterministic: the page's most
 * central sentences, in the order the page has them. A sentence is central when its words are
 * the page's frequent words and its title's; the first sentences of a page weigh a little more,
 * since pages state their subject early.
 */
import type { FetchPort } from "../ports.ts";
import { chat, type LlmConfig } from "./llm.ts";
import { docSentences } from "./sentences.ts";
import { contentTokens, stems } from "./words.ts";

export interface PageText {
  title: string | null;
  /** The page's main content as markdown (or text). */
  markdown: string;
}

const MAX_SENTENCES = 4;
const MAX_WORDS = 120;

/** Markdown's marks taken off a line, so a sentence reads as text. */
function plain(markdown: string): string {
  return markdown
    .replace(/```[\s\S]*?```/g, "\n\n")
    .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/^\s{0,3}(#{1,6}|[-*+]|\d+[.)]|>)\s+/gm, "")
    .replace(/^\s*\|.*\|\s*$/gm, "")
    .replace(/[*_`]+/g, "");
}

/** The extractive summary: at most 4 sentences (about 120 words) of the page, in its order; "" for a page without prose. */
export function extractiveSummary(page: PageText): string {
  const sentences = docSentences(plain(page.markdown))
    .map((text, i) => ({ text: text.trim(), i, words: text.split(/\s+/).length }))
    .filter((s) => s.words >= 6 && s.words <= 60 && /[.!?]["”’')]?$/.test(s.text));
  if (!sentences.length) return "";
  const df = new Map<string, number>();
  const sets = sentences.map((s) => stems(s.text));
  for (const set of sets) for (const w of set) df.set(w, (df.get(w) ?? 0) + 1);
  const title = page.title ? stems(page.title) : new Set<string>();
  const scored = sentences.map((s, k) => {
    const set = sets[k]!;
    if (set.size === 0) return { ...s, score: 0 };
    let central = 0;
    for (const w of set) central += (df.get(w)! - 1) / sentences.length;
    let titled = 0;
    for (const w of set) if (title.has(w)) titled++;
    const early = 1 / (1 + s.i / 4);
    return { ...s, score: central / Math.sqrt(set.size) + 0.5 * titled / Math.max(1, title.size) + 0.3 * early };
  });
  const chosen: typeof scored = [];
  let words = 0;
  for (const s of [...scored].sort((a, b) => b.score - a.score || a.i - b.i)) {
    if (chosen.length >= MAX_SENTENCES) break;
    if (words > 0 && words + s.words > MAX_WORDS) continue;
    // The same thing said twice is said once.
    const mine = contentTokens(s.text);
    if (chosen.some((c) => overlap(mine, contentTokens(c.text)) > 0.7)) continue;
    chosen.push(s);
    words += s.words;
  }
  return chosen.sort((a, b) => a.i - b.i).map((s) => s.text).join(" ");
}

function overlap(a: Set<string>, b: Set<string>): number {
  if (!a.size || !b.size) return 0;
  let n = 0;
  for (const w of a) if (b.has(w)) n++;
  return n / Math.min(a.size, b.size);
}

/** The page's text for a model, cut to about `maxChars` characters. */
export function pageForModel(page: PageText, maxChars = 24_000): string {
  const text = page.markdown.length > maxChars ? `${page.markdown.slice(0, maxChars)}\n\n[… the page goes on]` : page.markdown;
  return `${page.title ? `Title: ${page.title}\n\n` : ""}${text}`;
}

const SUMMARY_SYSTEM =
  "You summarise one web page for a reader who has not seen it. Use only what the page says. Answer with the summary alone: a few plain sentences, no heading, no list, no preamble.";

export interface PageModel {
  fetch: FetchPort;
  llm: LlmConfig;
  timeoutMs: number;
}

/** The model's summary of the page, and the tokens it cost; throws LlmError when the model fails. */
export async function modelSummary(model: PageModel, page: PageText): Promise<{ summary: string; tokens: number }> {
  const res = await chat(model.fetch, model.llm, [{ role: "system", content: SUMMARY_SYSTEM }, { role: "user", content: pageForModel(page) }], model.timeoutMs, 400);
  return { summary: res.content.trim(), tokens: res.tokens };
}
