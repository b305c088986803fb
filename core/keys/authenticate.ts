/**
 * Bearer authentication. The token's format is checked before any storage lookup; the
 * secret is only ever hashed for storage. Unknown hashes are remembered: a random 256-bit secret that
 * is unknown now stays unknown, so a flood repeating bad keys costs one lookup each, and
 * concurrent lookups of one hash share a single round trip. Known keys (with their account)
 * are served from memory only while the store's change mark stays the same: any write to
 * accounts or keys, by this process, another instance or the CLI, changes the mark, so a
 * revocation or a plan change holds on the very next request.
 *
 * Known keys are found by their secret, not by its hash: a SHA-256 in JavaScript was a tenth to
 * a sixth of an authenticated read's CPU on Deno and Bun (issue #33). The secrets of keys that
 * authenticated since the mark last changed stay in this process's memory, as every request's
 * header does until it is collected; they are never logged, stored or sent anywhere, and the
 * map forgets them all whenever the mark changes. Secrets that match no key are remembered by
 * hash only.
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

/** A principal and the store's change mark read for this request (null: the store cannot tell). */
export interface Authenticated extends Principal {
  mark: string | null;
}

export class Authenticator {
  private unknown = new Map<string, true>();
  private inflight = new Map<string, Promise<Principal | null>>();
  /** Secret → principal, valid while the mark is `this.mark`. */
  private known = new Map<string, Principal>();
  private mark: string | null = null;
  /** The last well-formed header and the secret in it (never empty once set: "" matches no header that gets here). */
  private lastHeader = "";
  private lastSecret = "";

  constructor(
    private readonly store: KeyStore,
    private readonly maxUnknown = 50_000,
    private readonly maxKnown = 10_000,
  ) {}

  async authenticate(header: string | undefined | null): Promise<Authenticated> {
    if (header === undefined || header === null || header === "") {
      throw new ApiError("missing_auth", "Missing Authorization header; send 'Authorization: Bearer <API key>'.");
    }
    const secret = this.secretOf(header);
    if (secret === null) {
      throw new ApiError("invalid_auth", "Malformed Authorization header; expected 'Bearer qry_' followed by 64 lowercase hex characters.");
    }
    // A secret known under the current mark skips the hash; any other is hashed, and refused
    // at once if its hash is known to match nothing.
    let hash: string | null = null;
    if (!this.known.has(secret)) {
      hash = await hashSecret(secret);
      if (this.unknown.has(hash)) throw invalidKey();
    }
    // Read the mark before looking up, so whatever is cached is at least as new as the mark.
    const mark = this.store.changeMark ? await this.store.changeMark() : null;
    if (mark === null || mark !== this.mark) {
      this.known.clear();
      this.mark = mark;
    }
    let found = this.known.get(secret) ?? null;
    if (!found) {
      found = await this.lookup(hash ?? (await hashSecret(secret)));
      if (!found) {
        this.rememberUnknown(hash ?? (await hashSecret(secret)));
        throw invalidKey();
      }
      if (mark !== null && mark === this.mark) {
        if (this.known.size >= this.maxKnown) this.known.clear();
        this.known.set(secret, found);
      }
    }
    if (found.key.revoked_at) throw invalidKey();
    return { key: found.key, account: found.account, mark };
  }

  /**
   * The principal this process holds for the header's secret under the last mark it read, without
   * reading the mark: null when it holds none (or a revoked one). Only a guess until `authenticate`
   * confirms it (gateway/speculate.ts starts the admission beside that confirmation, never answers on it).
   */
  cached(header: string | undefined | null): Principal | null {
    if (!header || this.mark === null) return null;
    const secret = this.secretOf(header);
    const found = secret === null ? undefined : this.known.get(secret);
    return found && !found.key.revoked_at ? found : null;
  }

  /**
   * The well-formed secret in `header`, or null. A client sends the same header request after
   * request: the secret read from the last well-formed one is kept with it, so the two patterns
   * run once per header text, not per request.
   */
  private secretOf(header: string): string | null {
    if (header === this.lastHeader) return this.lastSecret;
    const secret = BEARER.exec(header)?.[1];
    if (secret === undefined || !isWellFormedSecret(secret)) return null;
    this.lastHeader = header;
    this.lastSecret = secret;
    return secret;
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
