/**
 * Helpers every backend shares: building the upstream URL under an operator's base URL,
 * classifying HTTP failures, and normalising dates and snippet text.
 */
import type { BackendError, UpstreamResponse } from "./types.ts";

/**
 * The upstream URL for `path` under `baseUrl`. The base URL replaces scheme, host, port and
 * (when it has one) a path prefix; the upstream's own path is kept, so a replay server or a
 * mirror can stand in for any upstream (api.md §1).
 */
export function upstreamUrl(
  baseUrl: string,
  path: string,
  params: Record<string, string | number | undefined>,
): URL {
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/+$/, "");
  const url = new URL(prefix + path, base.origin);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  return url;
}

/** `{lang}` in a base URL becomes the primary language subtag (Wikipedia's per-language hosts). */
export function withLanguage(baseUrl: string, language: string): string {
  return baseUrl.replaceAll("{lang}", languageParts(language).lang);
}

/** `de-AT` → `{lang: "de", region: "at"}`; anything unusable falls back to English. */
export function languageParts(tag: string): { lang: string; region: string | null } {
  const [lang = "", ...rest] = tag.toLowerCase().split(/[-_]/);
  const region = rest.find((part) => /^[a-z]{2}$/.test(part)) ?? null;
  return { lang: /^[a-z]{2,3}$/.test(lang) ? lang : "en", region };
}

/**
 * Retry-After in whole seconds: either delta-seconds or an HTTP-date, the latter measured
 * against the response's own Date header so the parser stays pure (RFC 9110 §10.2.3).
 */
export function retryAfterFromHeaders(headers: Headers): number | undefined {
  const raw = headers.get("retry-after")?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw);
  const at = Date.parse(raw);
  const now = Date.parse(headers.get("date") ?? "");
  if (Number.isNaN(at) || Number.isNaN(now)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** Classifies a non-2xx answer. 401/403 from a keyed API mean a bad key; from a scraped site, a block. */
export function httpFailure(res: UpstreamResponse, what: string): BackendError {
  const retry = retryAfterFromHeaders(res.headers);
  const withRetry = retry === undefined ? {} : { retryAfterSeconds: retry };
  if (res.status === 429) {
    // The wait it asked for is said too: it is what a caller of a failed request can act on.
    const wait = retry === undefined ? "" : ` (Retry-After ${retry} s)`;
    return { class: "rate_limited", message: `${what} answered 429 Too Many Requests${wait}`, ...withRetry };
  }
  if (res.status === 401 || res.status === 403) {
    return { class: "blocked", message: `${what} refused the request (HTTP ${res.status})` };
  }
  return { class: "http", message: `${what} answered HTTP ${res.status}`, ...withRetry };
}

export function parseFailure(what: string, detail: string): BackendError {
  return { class: "parse", message: `${what}: ${detail}` };
}

/** JSON.parse as a value: a malformed body is an expected failure, not an exception. */
export function parseJson(body: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch {
    return { ok: false };
  }
}

const ISO_DATE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * An ISO 8601 date or date-time as `YYYY-MM-DDTHH:MM:SSZ`. Values without a zone are taken
 * as UTC (Brave's `page_age`, SearXNG's naive `publishedDate`). Anything else — human text
 * such as "1 month ago" — is null: an unknown date, never a guessed one.
 */
export function toIsoUtc(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const m = ISO_DATE.exec(value.trim());
  if (!m) return null;
  const [, day, time = "00:00:00", zone = "Z"] = m;
  const ms = Date.parse(`${day}T${time.length === 5 ? `${time}:00` : time}${zone}`);
  if (Number.isNaN(ms)) return null;
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", hellip: "…", mdash: "—", ndash: "–",
};

/** Snippet markup (`<strong>`, `<b>`, entities) to plain text with collapsed whitespace. */
export function plainText(html: string): string {
  return html
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
      if (ref[0] !== "#") return NAMED_ENTITIES[ref.toLowerCase()] ?? whole;
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    })
    .replace(/\s+/g, " ")
    .trim();
}

/** Only absolute http(s) URLs are results; anything else is dropped by the parsers. */
export function isWebUrl(value: string): boolean {
  return /^https?:\/\//i.test(value) && URL.canParse(value);
}
