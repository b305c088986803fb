/** Schemas shared by several routes (spec: Resources). */
import * as v from "valibot";

export const IsoTimestamp = v.pipe(v.string(), v.isoTimestamp(), v.description("ISO 8601 UTC timestamp"));

export const ErrorObject = v.object({
  error: v.object({
    code: v.string(),
    message: v.string(),
    request_id: v.pipe(v.string(), v.regex(/^req_[0-9A-HJKMNP-TV-Z]{26}$/)),
    retry_after: v.optional(v.pipe(v.number(), v.integer())),
    details: v.optional(v.array(v.object({ field: v.string(), message: v.string() }))),
  }),
});

export const KeyRecordSchema = v.object({
  id: v.pipe(v.string(), v.regex(/^key_[0-9A-Z]{26}$/)),
  name: v.string(),
  prefix: v.pipe(v.string(), v.description("qry_ + first 4 hex + ... + last 4 hex")),
  created_at: IsoTimestamp,
  last_used_at: v.nullable(IsoTimestamp),
  scopes: v.array(v.string()),
});
