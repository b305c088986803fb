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
  return { field, message: issue.message };
}
