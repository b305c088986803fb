import { monotonicFactory } from "ulidx";

// ULIDs sort by creation time, so key ids list newest-first by plain comparison.
const ulid = monotonicFactory();

/** `req_` + 26 ULID characters (api.md §3). */
export function requestId(now: number): string {
  return `req_${ulid(now)}`;
}

/** The shape of every key id: anything else names no key. */
export const KEY_ID = /^key_[0-9A-Z]{26}$/;

/** `key_` + 26 ULID characters (the spec's `key_<id>`). */
export function keyId(now: number): string {
  return `key_${ulid(now)}`;
}

/** `crawl_` / `batch_` + 26 ULID characters: a site-level job (api.md §9). */
export function jobId(kind: "crawl" | "batch", now: number): string {
  return `${kind}_${ulid(now)}`;
}
