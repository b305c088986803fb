/**
 * Request and response parts every operation shares (api.md §5–6), defined once so the
 * operations cannot drift apart: the tier vocabulary, freshness, the query rule, counts,
 * languages, domain lists and the per-backend status record.
 */
import * as v from "valibot";

/** One tier vocabulary for every operation (api.md §5). */
export const TIERS = ["basic", "summary", "detailed", "full"] as const;
export type Tier = (typeof TIERS)[number];

export const FRESHNESS = ["day", "week", "month", "year"] as const;
export type Freshness = (typeof FRESHNESS)[number];

/** Characters as people count them: code points, so an emoji is one, not two UTF-16 units. */
export const codePoints = (s: string): number => [...s].length;

/** `query`: 1–500 characters after trimming. */
export const Query = v.pipe(
  v.string("query must be a string"),
  v.trim(),
  v.minLength(1, "query must not be empty"),
  v.check((s) => codePoints(s) <= 500, "query must be at most 500 characters"),
);

export const tierField = (fallback: Tier) =>
  v.optional(v.picklist(TIERS, `tier must be one of ${TIERS.join(", ")}`), fallback);

export const freshnessField = () =>
  v.optional(v.picklist(FRESHNESS, `freshness must be one of ${FRESHNESS.join(", ")}`));

/**
 * A whole number in [min, max]. Safe integers only: `99999999999999999999999` parses to a
 * float that `Number.isInteger` accepts, but no count or duration can be that large.
 */
export function wholeNumber(field: string, min: number, max: number = Number.MAX_SAFE_INTEGER) {
  const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `between ${min} and ${max}`;
  return v.pipe(
    v.number(`${field} must be a number`),
    v.safeInteger(`${field} must be a whole number ${range}`),
    v.minValue(min, `${field} must be at least ${min}`),
    v.maxValue(max, `${field} must be at most ${max}`),
  );
}

/** language[-script][-region][-variant…], e.g. `en`, `pt-BR`, `zh-Hant-TW`, `de-CH-1996`. */
const BCP47 = /^[A-Za-z]{2,3}(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|\d{3}))?(?:-(?:[A-Za-z0-9]{5,8}|\d[A-Za-z0-9]{3}))*$/;

export const Language = v.pipe(
  v.string("language must be a BCP-47 language tag"),
  v.maxLength(35, "language must be a BCP-47 language tag such as en or pt-BR"),
  v.regex(BCP47, "language must be a BCP-47 language tag such as en or pt-BR"),
);

const Hostname = v.pipe(
  v.string("each domain must be a string"),
  v.trim(),
  v.toLowerCase(),
  v.regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, "each domain must be a hostname such as example.org"),
);

/** An optional list of hostnames (include_domains / exclude_domains of search and research). */
export const Domains = (name: string) =>
  v.optional(v.pipe(v.array(Hostname, `${name} must be an array of hostnames`), v.maxLength(50, `${name} takes at most 50 hostnames`)));

/** A non-empty subset of `ids`, e.g. `backends` or `platforms`. */
export const idList = (field: string, ids: readonly string[], noun: string) =>
  v.optional(
    v.pipe(
      v.array(v.picklist(ids as string[], `each ${noun} must be one of ${ids.join(", ")}`), `${field} must be an array`),
      v.minLength(1, `${field} must not be empty`),
    ),
  );

/** A whole number in a response (a score that may be negative). */
export const Int = v.pipe(v.number(), v.integer());
/** A count in a response. */
export const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

/** How one backend did in this request (`meta.backends`). */
export const BackendStatus = v.object({
  status: v.picklist(["ok", "error", "timeout", "skipped", "disabled"]),
  results: Count,
  latency_ms: Count,
  error: v.optional(v.string()),
  retry_at: v.optional(v.pipe(v.string(), v.description("When this failed backend will be asked again (ISO 8601 UTC): it is suspended until then after its failure (a 429's Retry-After, a back-off after errors)"))),
});
