/** Key format, generation, hashing and masking (spec: API key secret; api.md §2). */

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

/** SHA-256 of the whole secret, lowercase hex: the only form that is stored. */
export async function hashSecret(secret: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret));
  return toHex(new Uint8Array(digest));
}

/** `qry_ab12...cd34`: the prefix, the first 4 and the last 4 hex characters. */
export function maskSecret(secret: string): string {
  const hex = secret.slice(KEY_PREFIX.length + 1);
  return `${KEY_PREFIX}_${hex.slice(0, 4)}...${hex.slice(-4)}`;
}
