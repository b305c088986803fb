/**
 * Research planning: the question plus a few sub-queries that cover its facets. The default
 * expansion is deterministic: the question's subject plus facet words chosen by the kind of
 * question (a sub-query that only repeats the question's words would find the same pages), or
 * each side of a comparison; with an LLM configured, the model proposes the sub-queries and
 * the deterministic plan stands in whenever it fails.
 */
import type { Tier } from "../../schema/fields.ts";
import { TIER_PLAN } from "./tiers.ts";
import { ASKS_AMOUNT } from "../../answers/answer-form.ts";

const QUESTION_WORDS = new Set(
  ("a an and are as at be by for from how i in is it of on or that the this to was what when where which who whom whose why " +
    "with do does did can could should would will you your my we our about tell me explain there their they its into vs versus " +
    "happen happened happens know have has had").split(" "),
);

/** The question's words without question and function words, in their original order and form. */
export function coreTerms(question: string): string {
  const words = question.replace(/[?!.,;:"“”()]+/g, " ").split(/\s+/).filter(Boolean);
  const kept = words.filter((w) => !QUESTION_WORDS.has(w.toLowerCase()));
  return (kept.length ? kept : words).join(" ");
}

/** The one who does an act of making, by the act's past form: English morphology, not a topic list. */
const MAKER: Record<string, string> = {
  wrote: "author", composed: "composer", invented: "inventor", discovered: "discoverer", painted: "painter", founded: "founder",
  built: "builder", designed: "designer", developed: "developer", created: "creator", directed: "director", sang: "singer",
  sculpted: "sculptor", made: "maker", proposed: "proposer",
};

/**
 * Facets by kind of question: words each sub-query adds to the question's subject, so every
 * sub-query asks the engines something the question alone does not. `strip` are the words of
 * the question that only say what kind of answer is wanted ("causes" in "what causes X").
 */
function facets(question: string): { add: string[]; strip: RegExp | null } {
  const q = question.toLowerCase().trim();
  if (/^(why|what (causes|caused|makes|made|led))\b/.test(q)) return { add: ["causes", "reasons explained", "main factors", "evidence"], strip: /^(causes?|caused|makes?|made|led|lead)$/i };
  if (/^how (to|do i|can i|should)\b/.test(q)) return { add: ["steps guide", "tips mistakes", "best practices", "beginners"], strip: null };
  if (ASKS_AMOUNT.test(q)) return { add: ["number figures", "statistics", "estimate range", "measured"], strip: /^how long (do|does|did|will|can|could|should|would)\b/.test(q) ? /^(many|much|long)$/i : /^(many|much)$/i };
  if (/^how (does|do|did|is|are)\b/.test(q)) return { add: ["mechanism", "process explained", "science behind", "examples"], strip: /^(work|works)$/i };
  if (/^(when|what year|in what year)\b/.test(q)) return { add: ["date", "timeline", "events leading up", "history"], strip: null };
  // "Who composed X" asks for the maker of X, not for a life: search X with the maker's title ("X composer").
  const act = q.match(/^who\s+(?:first\s+)?([a-z]+)\b/)?.[1];
  if (act && MAKER[act]) return { add: [MAKER[act], "history origin", "credited to", `${MAKER[act]} biography`], strip: new RegExp(`^(first|${act})$`, "i") };
  if (/^(who)\b/.test(q)) return { add: ["biography", "known for", "life achievements", "contributions"], strip: null };
  if (/^(where)\b/.test(q)) return { add: ["location", "route map", "range region", "places"], strip: null };
  if (/^what (happens|happened|will happen)\b/.test(q)) return { add: ["effects", "what happens", "risks", "explained"], strip: null };
  // A yes-no question asks whether a claim holds: search for the evidence on it, not the claim's words alone.
  if (/^(is|are|was|were|do|does|did|can|could|should|will|has|have)\b/.test(q)) return { add: ["evidence", "myth or fact", "research", "explained"], strip: /^(true|really|actually|myth)$/i };
  if (/^(what is|what are|what does|define)\b/.test(q)) return { add: ["definition", "meaning explained", "examples", "how it works"], strip: /^(mean|means|meaning|definition)$/i };
  return { add: ["overview", "explained", "analysis", "facts"], strip: null };
}

/** Sides of a comparison ("A vs B for C", "A or B", "A compared to B") and its shared context, or null. */
function comparison(question: string): { a: string; b: string; context: string } | null {
  const between = question.match(/\bdifferences? between\s+(.*?)\s+and\s+(.*?)[?.!]*$/i);
  const m = between ? [between[0], between[1], between[2]] : question.match(/^(.*?)\s+(?:vs\.?|versus|compared (?:to|with)|or)\s+(.*?)[?.!]*$/i);
  if (!m) return null;
  const [b, context = ""] = m[2]!.split(/\s+(?:for|in|when|on|with)\s+/i);
  const sa = coreTerms(m[1]!);
  const sb = coreTerms(b!);
  return sa && sb && sa.toLowerCase() !== sb.toLowerCase() ? { a: sa, b: sb, context: coreTerms(context) } : null;
}

/** Words of a query, each once (case-insensitively), in order. */
function uniqueWords(query: string): string {
  const seen = new Set<string>();
  return query.split(/\s+/).filter((w) => {
    const k = w.toLowerCase();
    if (!w || seen.has(k)) return false;
    seen.add(k);
    return true;
  }).join(" ");
}

const wordSet = (q: string) => [...new Set(normalise(q).split(" ").filter(Boolean))].sort().join(" ");

/** Sub-queries that differ from the question and from each other as sets of words, none repeating a word. */
function dedupe(queries: string[], question: string, limit: number): string[] {
  const seen = new Set([wordSet(question), wordSet(coreTerms(question))]);
  const out: string[] = [];
  for (const raw of queries) {
    const q = uniqueWords(raw.replace(/\s+/g, " ").trim()).slice(0, 200);
    const key = wordSet(q);
    if (!q || seen.has(key)) continue;
    seen.add(key);
    out.push(q);
    if (out.length >= limit) break;
  }
  return out;
}

const normalise = (q: string) => q.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();

/**
 * Deterministic sub-queries: same question and tier, same plan. None is the question's own
 * words again: each adds a facet of the kind of question (causes, timeline, definition, …) or,
 * for a comparison, asks about one side.
 */
export function planSubQueries(question: string, tier: Tier): string[] {
  const n = TIER_PLAN[tier].subQueries;
  const { add, strip } = facets(question);
  const words = coreTerms(question).split(" ");
  const subject = (strip ? words.filter((w) => !strip.test(w)) : words).join(" ") || words.join(" ");
  const candidates: string[] = [];
  const cmp = comparison(question);
  // A side alone is too broad a search without the comparison's context: ask what it is.
  if (cmp) {
    const context = cmp.context || "definition";
    candidates.push(`${cmp.a} ${context}`, `${cmp.b} ${context}`, `${cmp.a} vs ${cmp.b} ${cmp.context} differences`);
  }
  for (const facet of add) {
    // A facet word the question already holds adds nothing: that facet is skipped.
    const fresh = facet.split(" ").filter((w) => !new RegExp(`\\b${w}\\b`, "i").test(question));
    if (fresh.length) candidates.push(`${subject} ${fresh.join(" ")}`);
  }
  return dedupe(candidates, question, n);
}

/** Sub-queries from a model's answer (one per line); an empty list means "use the deterministic plan". */
export function parseModelQueries(text: string, question: string, tier: Tier): string[] {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, "").replace(/^["'“]|["'”]$/g, "").trim())
    .filter((l) => l.length >= 3 && l.length <= 200 && !/^(here|sure|queries?)\b.*:$/i.test(l));
  return dedupe(lines, question, TIER_PLAN[tier].subQueries);
}

export function planPrompt(question: string, tier: Tier): { system: string; user: string } {
  const n = TIER_PLAN[tier].subQueries;
  return {
    system: "You plan web research. Write search engine queries that together cover the different facets of a question. Answer with the queries only, one per line, no numbering, no commentary.",
    user: `Question: ${question}\nWrite ${n} web search queries.`,
  };
}
