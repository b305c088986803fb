/**
 * What a job may store (issue #28, item 4): each page's stored content is capped
 * (QUARRY_JOB_PAGE_BYTES), and so are the links taken from one page (QUARRY_JOB_PAGE_LINKS) and the
 * skipped URLs a job lists; what a job's rows hold counts toward its account's `jobs_storage_bytes`.
 * Sizes are UTF-8 bytes of what the store writes: a page's data as JSON, a URL as text. A new job
 * past its account's limits (`jobs_concurrent`, `jobs_storage_bytes`) is refused with JobRefused.
 */

import type { CreateOutcome } from "../ports/jobs.ts";
export type { AccountLimits } from "../ports/jobs.ts";

/** A job its account's limits refused (too many active, its storage full): nothing was stored. */
export class JobRefused extends Error {
  constructor(readonly refusal: Extract<CreateOutcome, { created: false }>) {
    super(`job refused: ${refusal.reason}`);
  }

  /** Throws when the store refused the job. */
  static unless(outcome: CreateOutcome): void {
    if (!outcome.created) throw new JobRefused(outcome);
  }
}

/** A page read while its account's job storage was full: stored without its content, as failed, and free; its job stops. */
export const STORAGE_FULL = "storage_full";

/** Skipped URLs a job keeps listed (robots.txt, private addresses, traps); past it they are counted in `dropped.skipped_urls` only. */
export const MAX_SKIPPED_URLS = 1000;

/** UTF-8 bytes of `s` (a surrogate pair is 4 bytes; a lone surrogate is written as 3). */
export function utf8Bytes(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // the pair: 2 units, 4 bytes
      i++;
    } else n += 2;
  }
  return n;
}

/** The bytes a frontier row's text takes (its URL, and a skipped one's reason). */
export const rowBytes = (url: string, reason?: string | null): number => utf8Bytes(url) + (reason ? utf8Bytes(reason) : 0);

/** The content formats a page may hold, in the order they give way when its data is too large (the largest first among equals). */
const CONTENT = ["raw_html", "html", "screenshot", "structured_data", "text", "markdown", "links"] as const;

/**
 * A page's data within `max` bytes (as stored: JSON). Under it, unchanged. Over it, each content
 * format gets an equal share of what the rest leaves, a smaller one keeping all of its own and
 * leaving its unused share to the others: text formats are cut at a character, `links` keeps its
 * first links, a screenshot that does not fit is left out whole (a cut image is no image).
 * `truncated` names the formats cut or left out; `cut` is how many bytes were left out.
 */
export function capPageData(data: Record<string, unknown>, max: number): { data: Record<string, unknown>; truncated: string[]; cut: number } {
  // Most pages are far under the cap: at most 3 bytes a character (6 escaped) says so without encoding.
  let bound = 2;
  for (const [k, v] of Object.entries(data)) bound += k.length * 6 + 4 + (typeof v === "string" ? v.length * 6 + 2 : v === undefined ? 0 : JSON.stringify(v).length * 3);
  if (bound <= max) return { data, truncated: [], cut: 0 };
  const total = utf8Bytes(JSON.stringify(data));
  if (total <= max) return { data, truncated: [], cut: 0 };
  const fields = CONTENT.filter((f) => data[f] !== undefined).map((f) => ({ f, size: utf8Bytes(JSON.stringify(data[f])) }));
  const rest = total - fields.reduce((n, x) => n + x.size, 0);
  // Room for the note itself (`"truncated":[…]`) beside the rest.
  let budget = Math.max(0, max - rest - 100);
  const out: Record<string, unknown> = { ...data };
  const truncated: string[] = [];
  const sorted = [...fields].sort((a, b) => a.size - b.size);
  sorted.forEach(({ f, size }, i) => {
    const share = Math.floor(budget / (sorted.length - i));
    if (size <= share) {
      budget -= size;
      return;
    }
    truncated.push(f);
    const kept = f === "screenshot" ? undefined : fit(data[f], share);
    if (kept === undefined) delete out[f];
    else out[f] = kept;
    budget -= kept === undefined ? 0 : utf8Bytes(JSON.stringify(kept));
  });
  out.truncated = CONTENT.filter((f) => truncated.includes(f));
  return { data: out, truncated: out.truncated as string[], cut: Math.max(0, total - utf8Bytes(JSON.stringify(out))) };
}

/** `value` cut to at most `max` bytes of JSON; undefined when nothing of it fits (or it cannot be cut). */
function fit(value: unknown, max: number): unknown {
  if (typeof value === "string") {
    // A first guess from the share of the whole, then shorter until it fits (escapes and
    // multi-byte characters make JSON longer than the characters).
    const whole = utf8Bytes(JSON.stringify(value));
    let n = Math.floor((value.length * max) / whole);
    for (let tries = 0; tries < 20 && n > 0; tries++) {
      let cut = value.slice(0, n);
      if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1); // never half a pair
      if (utf8Bytes(JSON.stringify(cut)) <= max) return cut;
      n = Math.floor(n * 0.9);
    }
    return undefined;
  }
  if (Array.isArray(value)) {
    const kept: unknown[] = [];
    let used = 2;
    for (const item of value) {
      const size = utf8Bytes(JSON.stringify(item)) + 1;
      if (used + size > max) break;
      kept.push(item);
      used += size;
    }
    return kept.length ? kept : undefined;
  }
  return undefined; // anything else is whole or left out
}
