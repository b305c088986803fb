/**
 * What the cache adapters store under. unstorage normalises keys (it drops everything after a
 * `?` and folds `/` and `\` into `:`), so a caller's raw key such as a URL with a query string
 * would collide with others (issue #17). The adapters store under the SHA-256 of the key
 * instead, and keep the key itself in the entry so that a get answers only the exact key.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

/** 64 hex characters: nothing unstorage rewrites, whatever the key holds. */
export function cacheSlot(key: string): string {
  return bytesToHex(sha256(utf8ToBytes(key)));
}

/** An entry as stored: the exact key, the value and (in process) its expiry time in ms. */
export interface CacheEntry {
  k: string;
  v: unknown;
  exp?: number;
}

/** The entry only when it belongs to `key` (a hash collision or a foreign writer never answers). */
export function entryFor(key: string, e: unknown): CacheEntry | null {
  return e && typeof e === "object" && (e as CacheEntry).k === key && "v" in e ? (e as CacheEntry) : null;
}
