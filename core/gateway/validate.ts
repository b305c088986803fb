/**
 * Validation of a request against its valibot schema, with one wording for every route: each
 * issue names its field, a missing field "is required", an unknown one is an "unknown field".
 */
import * as v from "valibot";
import { ApiError, type FieldIssue } from "../errors.ts";

export type Validated<T> = { ok: true; value: T } | { ok: false; issues: FieldIssue[] };

export function validate<S extends v.GenericSchema>(schema: S, input: unknown): Validated<v.InferOutput<S>> {
  // Every field is checked, but each field's checks stop at its first failure: one complaint per field.
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  return result.success ? { ok: true, value: result.output } : { ok: false, issues: result.issues.map(toFieldIssue) };
}

/** The value, or the 400 `invalid_request` naming the first issue (all of them in `details`). */
export function validOrThrow<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const out = validate(schema, input);
  if (out.ok) return out.value;
  const first = out.issues[0]!;
  throw new ApiError("invalid_request", first.field ? `${first.field}: ${first.message}` : first.message, { details: out.issues });
}

function toFieldIssue(issue: v.BaseIssue<unknown>): FieldIssue {
  const field = issue.path?.map((p) => String(p.key)).join(".") ?? "";
  // strictObject reports an unknown key as an issue on that key's path.
  if (issue.kind === "schema" && issue.expected === "never" && issue.path?.length) return { field, message: "unknown field" };
  // A missing key is reported by the object schema in valibot's words ("Invalid key: Expected …").
  if (issue.input === undefined && issue.path?.length && issue.message.startsWith("Invalid key")) {
    return { field, message: `${field} is required` };
  }
  // A type check without words of its own says it in valibot's ("Invalid type: Expected Object but received 5").
  const expected = field ? /^Invalid type: Expected (.+) but received /.exec(issue.message) : null;
  const kinds = expected ? kindWords(expected[1]!) : null;
  if (kinds) return { field, message: `${field} must be ${kinds}` };
  return { field, message: issue.message };
}

const KIND_WORDS: Record<string, string> = { string: "a string", number: "a number", boolean: "true or false", Object: "an object", Array: "an array", null: "null" };

/** `(string | Object)` as "a string or an object"; null for a type these words do not cover. */
function kindWords(expected: string): string | null {
  const kinds = expected.replace(/^\((.*)\)$/, "$1").split(" | ").filter((k) => k !== "undefined");
  const words = kinds.map((k) => KIND_WORDS[k]);
  return words.length && words.every(Boolean) ? words.join(" or ") : null;
}
