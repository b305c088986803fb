/**
 * Bearer authentication. The token's format is checked before any storage lookup; the
 * secret is only ever hashed. Unknown hashes are remembered: a random 256-bit secret that
 * is unknown now stays unknown, so a flood repeating bad keys costs one lookup each, and
 * concurrent lookups of one hash share a single round trip. Known keys are always read
 * from storage, so a revocation (by any instance or the CLI) holds on the very next request.
 */
import { ApiError } from "../errors.ts";
import type { KeyRecord, KeyStore } from "../ports.ts";
import { hashSecret, isWellFormedSecret } from "./secret.ts";

const BEARER = /^Bearer +(\S+)\s*$/i;

export class Authenticator {
  private unknown = new Map<string, true>();
  private inflight = new Map<string, Promise<KeyRecord | null>>();

  constructor(
    private readonly store: KeyStore,
    private readonly maxUnknown = 50_000,
  ) {}

  async authenticate(header: string | undefined | null): Promise<KeyRecord> {
    if (header === undefined || header === null || header === "") {
      throw new ApiError("missing_auth", "Missing Authorization header; send 'Authorization: Bearer <API key>'.");
    }
    const m = BEARER.exec(header);
    if (!m || !isWellFormedSecret(m[1])) {
      throw new ApiError("invalid_auth", "Malformed Authorization header; expected 'Bearer qry_' followed by 64 lowercase hex characters.");
    }
    const hash = await hashSecret(m[1]);
    if (this.unknown.has(hash)) throw invalidKey();
    const key = await this.lookup(hash);
    if (!key) {
      this.rememberUnknown(hash);
      throw invalidKey();
    }
    if (key.revoked_at) throw invalidKey();
    return key;
  }

  private lookup(hash: string): Promise<KeyRecord | null> {
    let p = this.inflight.get(hash);
    if (!p) {
      p = this.store.getKeyByHash(hash).finally(() => this.inflight.delete(hash));
      this.inflight.set(hash, p);
    }
    return p;
  }

  private rememberUnknown(hash: string): void {
    if (this.unknown.size >= this.maxUnknown) {
      // Oldest first: Map iteration follows insertion order.
      const oldest = this.unknown.keys().next().value;
      if (oldest !== undefined) this.unknown.delete(oldest);
    }
    this.unknown.set(hash, true);
  }
}

function invalidKey(): ApiError {
  return new ApiError("invalid_key", "The API key was not found or has been revoked.");
}
