/**
 * A page's `json` format (scrape, Firecrawl's `{type: "json", schema, prompt}`): the model at
 * QUARRY_LLM_URL fills the caller's JSON Schema from the page. Its answer is parsed and validated
 * against the schema (@cfworker/json-schema: pure JavaScript, no code generation, so it runs on
 * Node, Deno and Bun alike); an answer that does not validate is sent back once with what was
 * wrong, and a second invalid answer is refused rather than returned.
 */
import { Validator, type OutputUnit } from "@cfworker/json-schema";
import { chat } from "./llm.ts";
import { pageForModel, type PageModel, type PageText } from "./page-summary.ts";

export interface JsonAsk {
  /** A JSON Schema (draft 2020-12, 2019-09, 7 or 4) the answer must match. */
  schema?: Record<string, unknown>;
  /** What to extract, in words. */
  prompt?: string;
}

/** The model's answer could not be used: never valid JSON, or not valid against the schema after the retry. */
export class PageJsonError extends Error {}

/** A JSON Schema the validator cannot use (an unresolvable `$ref`, a wrong keyword type): the caller's mistake. */
export class BadSchemaError extends Error {}

/** Checks that the schema can be used at all (validating a sample against it), before any page is read. */
export function checkSchema(schema: Record<string, unknown>): void {
  try {
    new Validator(schema as never, "2020-12", false).validate({});
  } catch (err) {
    throw new BadSchemaError(err instanceof Error ? err.message : String(err));
  }
}

/** The first JSON value of a reply: bare, or in a ```json fence, or the outermost {…} / […] of prose. */
export function parseReply(content: string): { ok: true; value: unknown } | { ok: false } {
  const candidates = [content.trim()];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(content);
  if (fenced) candidates.push(fenced[1]!.trim());
  const first = content.search(/[{[]/);
  const last = Math.max(content.lastIndexOf("}"), content.lastIndexOf("]"));
  if (first >= 0 && last > first) candidates.push(content.slice(first, last + 1));
  for (const c of candidates) {
    try {
      return { ok: true, value: JSON.parse(c) };
    } catch {
      // the next candidate
    }
  }
  return { ok: false };
}

/** What was wrong, in a few lines a model (and a person) can act on. */
function describe(errors: OutputUnit[]): string {
  const lines = errors
    .filter((e) => !/^(properties|items|allOf|anyOf|oneOf|\$ref)$/.test(e.keyword) || errors.length === 1)
    .slice(0, 8)
    .map((e) => `${e.instanceLocation || "#"}: ${e.error}`);
  return [...new Set(lines.length ? lines : errors.slice(0, 3).map((e) => `${e.instanceLocation || "#"}: ${e.error}`))].join("\n");
}

function system(ask: JsonAsk): string {
  return [
    "You extract structured data from one web page. Use only what the page says; where it does not say, use null if the schema allows it, else leave the field out unless it is required.",
    "Answer with one JSON value only: no prose, no code fence.",
    ask.schema ? `The JSON must be valid against this JSON Schema:\n${JSON.stringify(ask.schema)}` : "Answer with a JSON object whose keys name what you extracted.",
  ].join("\n");
}

/** The page's data as the schema asks, and the tokens the model used; throws PageJsonError or LlmError. */
export async function modelJson(model: PageModel, page: PageText, ask: JsonAsk): Promise<{ json: unknown; tokens: number; attempts: number }> {
  const validator = ask.schema ? new Validator(ask.schema as never, "2020-12", false) : null;
  const messages = [
    { role: "system", content: system(ask) },
    { role: "user", content: `${ask.prompt ? `What to extract: ${ask.prompt}\n\n` : ""}The page:\n\n${pageForModel(page)}` },
  ];
  let tokens = 0;
  let problem = "";
  for (let attempt = 1; attempt <= 2; attempt++) {
    const res = await chat(model.fetch, model.llm, messages, model.timeoutMs, 1500);
    tokens += res.tokens;
    const parsed = parseReply(res.content);
    if (!parsed.ok) problem = "the answer was not JSON";
    else if (!validator) {
      if (parsed.value !== null && typeof parsed.value === "object") return { json: parsed.value, tokens, attempts: attempt };
      problem = "the answer was not a JSON object";
    } else {
      const result = validator.validate(parsed.value);
      if (result.valid) return { json: parsed.value, tokens, attempts: attempt };
      problem = `the answer did not match the schema:\n${describe(result.errors)}`;
    }
    messages.push({ role: "assistant", content: res.content }, { role: "user", content: `That answer cannot be used: ${problem}\nAnswer again with JSON only.` });
  }
  throw new PageJsonError(`The model's answer could not be used after 2 tries: ${problem.replace(/\n/g, "; ")}`);
}
