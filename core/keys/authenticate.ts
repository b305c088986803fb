/**
 * Bearer authentication. The token's format is checked before any storage lookup; the
 * secret is only ever hashed. Unknown hashes are remembered: a random 256-bit secret that
 * is unknown now stays unknown, so a flood repeating bad keys costs one lookup each, and
 * concurrent lookups of one hash share a single round trip. Known keys (with their account)
 * are served from memory only while the store's change mark stays the same: any write to
 * accounts or keys, by this process, another instance or the CLI, changes the mark, so a
 * revocation or a plan change holds on the very next request.
 */
import { ApiError } from "../errors.ts";
import { LOWEST_PLAN } from "../limits/plans.ts";
import type { Account, KeyRecord, KeyStore } from "../ports.ts";
import { hashSecret, isWellFormedSecret } from "./secret.ts";

const BEARER = /^Bearer +(\S+)\s*$/i;

export interface Principal {
  key: KeyRecord;
  account: Account;
}

export class Authenticator {
  private unknown = new Map<string, true>();
  private inflight = new Map<string, Promise<Principal | null>>();
  private known = new Map<string, Principal>();
  private mark: string | null = null;

  constructor(
    private readonly store: KeyStore,
    private readonly maxUnknown = 50_000,
    private readonly maxKnown = 10_000,
  ) {}

  async authenticate(header: string | undefined | null): Promise<Principal> {
    if (header === undefined || header === null || header === "") {
      throw new ApiError("missing_auth", "Missing Authorization header; send 'Authorization: Bearer <API key>'.");
    }
    const m = BEARER.exec(header);
    if (!m || !isWellFormedSecret(m[1])) {
      throw new ApiError("invalid_auth", "Malformed Authorization header; expected 'Bearer qry_' followed by 64 lowercase hex characters.");
    }
    const hash = await hashSecret(m[1]);
    if (this.unknown.has(hash)) throw invalidKey();
    // Read the mark before looking up, so whatever is cached is at least as new as the mark.
    const mark = this.store.changeMark ? await this.store.changeMark() : null;
    if (mark === null || mark !== this.mark) {
      this.known.clear();
      this.mark = mark;
    }
    let found = this.known.get(hash) ?? null;
    if (!found) {
      found = await this.lookup(hash);
      if (!found) {
        this.rememberUnknown(hash);
        throw invalidKey();
      }
      if (mark !== null && mark === this.mark) {
        if (this.known.size >= this.maxKnown) this.known.clear();
        this.known.set(hash, found);
      }
    }
    if (found.key.revoked_at) throw invalidKey();
    return found;
  }

  private lookup(hash: string): Promise<Principal | null> {
    let p = this.inflight.get(hash);
    if (!p) {
      p = this.load(hash).finally(() => this.inflight.delete(hash));
      this.inflight.set(hash, p);
    }
    return p;
  }

  private async load(hash: string): Promise<Principal | null> {
    const key = await this.store.getKeyByHash(hash);
    if (!key) return null;
    const account = (await this.store.getAccount(key.account)) ?? { name: key.account, plan: LOWEST_PLAN, created_at: key.created_at };
    return { key, account };
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
