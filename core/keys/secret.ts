/** Key format, generation, hashing and masking (spec: API key secret; api.md §2). */
import { sha256 } from "@noble/hashes/sha2.js";

export const KEY_PREFIX = "qry";
/** A well-formed secret: the prefix, an underscore and exactly 64 lowercase hex characters. */
export const SECRET_PATTERN = /^qry_[0-9a-f]{64}$/;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += HEX[b];
  return out;
}

/** 256 bits from the platform's CSPRNG. */
export function generateSecret(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return `${KEY_PREFIX}_${toHex(bytes)}`;
}

export function isWellFormedSecret(token: string): boolean {
  return SECRET_PATTERN.test(token);
}

const encoder = new TextEncoder();

/**
 * SHA-256 of the whole secret, lowercase hex: the only form that is stored. @noble/hashes
 * (audited, pure JavaScript) rather than WebCrypto: on Node 20, `crypto.subtle.digest` costs
 * a job round trip per call, a quarter of an authenticated request's CPU time.
 */
export async function hashSecret(secret: string): Promise<string> {
  return sha256Hex(secret);
}

/** SHA-256 of a text's UTF-8, lowercase hex: content hashes (documents, reads, cached vectors) as well as secrets. */
export function sha256Hex(text: string): string {
  return toHex(sha256(encoder.encode(text)));
}

/** `qry_ab12...cd34`: the prefix, the first 4 and the last 4 hex characters. */
export function maskSecret(secret: string): string {
  const hex = secret.slice(KEY_PREFIX.length + 1);
  return `${KEY_PREFIX}_${hex.slice(0, 4)}...${hex.slice(-4)}`;
}

/**
 * Compares two secrets without leaking, through timing, how much of them matched: both are
 * hashed first, so the comparison always runs over 32 bytes whatever their lengths.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = sha256(encoder.encode(a));
  const y = sha256(encoder.encode(b));
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}
