/**
 * Research planning: the question plus a few sub-queries that cover its facets. The default
 * expansion is deterministic (the question's content words, then facet templates chosen by
 * the kind of question); with an LLM configured, the model proposes the sub-queries and the
 * deterministic plan stands in whenever it fails.
 */
import type { Tier } from "../fields.ts";
import { TIER_PLAN } from "./tiers.ts";

const QUESTION_WORDS = new Set(
  ("a an and are as at be by for from how i in is it of on or that the this to was what when where which who whom whose why " +
    "with do does did can could should would will you your my we our about tell me explain there their they its into vs versus " +
    "happen happened happens know").split(" "),
);

/** The question's words without question and function words, in their original order and form. */
export function coreTerms(question: string): string {
  const words = question.replace(/[?!.,;:"“”()]+/g, " ").split(/\s+/).filter(Boolean);
  const kept = words.filter((w) => !QUESTION_WORDS.has(w.toLowerCase()));
  return (kept.length ? kept : words).join(" ");
}

/** Facet templates by question kind; `{}` is the core terms. */
function facets(question: string): string[] {
  const q = question.toLowerCase().trim();
  if (/^(why|what (causes|caused|led))\b/.test(q)) return ["{} causes", "{} reasons explained", "{} consequences", "{} evidence"];
  if (/^how (to|do i|can i|should)\b/.test(q)) return ["{} guide", "{} steps", "{} common mistakes", "{} best practices"];
  if (/^how (does|do|did|is|are)\b/.test(q)) return ["{} how it works", "{} explained", "{} examples", "{} limitations"];
  if (/^(when|what year)\b/.test(q)) return ["{} timeline", "{} date", "{} history", "{} latest"];
  if (/^(who)\b/.test(q)) return ["{} people involved", "{} background", "{} role", "{} latest"];
  if (/^(what is|what are|define)\b/.test(q)) return ["{} definition", "{} explained", "{} examples", "{} criticism"];
  return ["{} overview", "{} analysis", "{} criticism", "{} latest developments"];
}

/** Sides of a comparison ("A vs B for C", "A or B", "A compared to B") and its shared context, or null. */
function comparison(question: string): { a: string; b: string; context: string } | null {
  const m = question.match(/^(.*?)\s+(?:vs\.?|versus|compared (?:to|with)|or)\s+(.*?)[?.!]*$/i);
  if (!m) return null;
  const [b, context = ""] = m[2]!.split(/\s+(?:for|in|when|on|with)\s+/i);
  const sa = coreTerms(m[1]!);
  const sb = coreTerms(b!);
  return sa && sb && sa.toLowerCase() !== sb.toLowerCase() ? { a: sa, b: sb, context: coreTerms(context) } : null;
}

function dedupe(queries: string[], question: string, limit: number): string[] {
  const seen = new Set([normalise(question)]);
  const out: string[] = [];
  for (const raw of queries) {
    const q = raw.replace(/\s+/g, " ").trim().slice(0, 200);
    const key = normalise(q);
    if (!q || seen.has(key)) continue;
    seen.add(key);
    out.push(q);
    if (out.length >= limit) break;
  }
  return out;
}

const normalise = (q: string) => q.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();

/** Deterministic sub-queries: same question and tier, same plan. */
export function planSubQueries(question: string, tier: Tier): string[] {
  const n = TIER_PLAN[tier].subQueries;
  const core = coreTerms(question);
  const candidates: string[] = [];
  const cmp = comparison(question);
  if (cmp) candidates.push(`${cmp.a} ${cmp.context}`, `${cmp.b} ${cmp.context}`, `${cmp.a} vs ${cmp.b} ${cmp.context} differences`);
  if (normalise(core) !== normalise(question)) candidates.push(core);
  for (const f of facets(question)) candidates.push(f.replace("{}", core));
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
