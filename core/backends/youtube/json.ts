/**
 * Typed narrowing of InnerTube JSON. InnerTube answers are deep, loosely versioned trees
 * whose optional parts come and go; every read goes through these helpers, so a missing or
 * reshaped node yields `null` or `[]` (and the parser decides what that means) instead of a
 * TypeError or an `any` leaking into the domain types.
 */

export type JsonRecord = Record<string, unknown>;

export function asRecord(value: unknown): JsonRecord | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRecord) : null;
}

/** Follows a path of keys and indexes; null as soon as a step is missing. */
export function at(value: unknown, ...path: (string | number)[]): unknown {
  let cur: unknown = value;
  for (const step of path) {
    if (typeof step === "number") {
      if (!Array.isArray(cur)) return null;
      cur = cur[step];
    } else {
      const rec = asRecord(cur);
      if (!rec) return null;
      cur = rec[step];
    }
    if (cur === undefined) return null;
  }
  return cur;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

export function asBoolean(value: unknown): boolean {
  return value === true;
}

/** InnerTube's number fields are often decimal strings ("930", "220226287"). */
export function asCount(value: unknown): number | null {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === "string" && /^\d+$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : null;
  }
  return null;
}

/**
 * The text of an InnerTube text object, one of `{simpleText}` (WEB), `{runs:[{text}]}` (WEB snippets,
 * ANDROID and VISIONOS caption names), a single run `{text}` or `{content}` (view models).
 */
export function textOf(value: unknown): string {
  const rec = asRecord(value);
  if (!rec) return typeof value === "string" ? value : "";
  const simple = asString(rec.simpleText) ?? asString(rec.content) ?? asString(rec.text);
  if (simple !== null) return simple;
  return asArray(rec.runs)
    .map((run) => asString(asRecord(run)?.text) ?? "")
    .join("");
}
