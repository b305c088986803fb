import { monotonicFactory } from "ulidx";

/**
 * Random bytes for ids, drawn from the system's generator 4 KB at a time: ulidx asks for one
 * byte per character, a `getRandomValues` call each, 16 per id, which was 4 % of a request's
 * CPU. Each byte gives one of 32 characters (256 = 8 × 32, so none is favoured). Ids are names,
 * not secrets (key secrets come from keys/secret.ts).
 */
const pool = new Uint8Array(4096);
let taken = pool.length;
function pooledRandom(): number {
  if (taken >= pool.length) {
    crypto.getRandomValues(pool);
    taken = 0;
  }
  return pool[taken++]! / 256;
}

// ULIDs sort by creation time, so key ids list newest-first by plain comparison.
const ulid = monotonicFactory(pooledRandom);

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

/** `mon_` + 26 ULID characters: a monitor (issue #31). */
export function monitorId(now: number): string {
  return `mon_${ulid(now)}`;
}

/** `run_` + 26 ULID characters: one run of a monitor. */
export function monitorRunId(now: number): string {
  return `run_${ulid(now)}`;
}
