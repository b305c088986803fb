/** Key lifecycle over the KeyStore port: create, list, revoke, and the public record shape. */
import { ApiError, echoed } from "../errors.ts";
import { KEY_ID, keyId } from "../ids.ts";
import { isoSeconds } from "../limits/period.ts";
import { LOWEST_PLAN, type PlanTable } from "../limits/plans.ts";
import type { Account, KeyRecord, KeyStore } from "../ports.ts";
import { canManage } from "./scopes.ts";
import { generateSecret, hashSecret, maskSecret } from "./secret.ts";

/** The key record as the API shows it (spec: API key record). */
export interface PublicKey {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  scopes: string[];
}

export function publicKey(k: KeyRecord, lastUsed: string | null): PublicKey {
  return { id: k.id, name: k.name, prefix: k.prefix, created_at: k.created_at, last_used_at: lastUsed, scopes: k.scopes };
}

export async function ensureAccount(
  store: KeyStore,
  name: string,
  plan: string | undefined,
  plans: PlanTable,
  now: number,
): Promise<Account> {
  if (plan !== undefined && !plans[plan]) throw new ApiError("invalid_request", `unknown plan "${plan}"`);
  const existing = await store.getAccount(name);
  if (existing) {
    if (plan !== undefined && existing.plan !== plan) {
      const updated = { ...existing, plan };
      await store.putAccount(updated);
      return updated;
    }
    return existing;
  }
  const account: Account = { name, plan: plan ?? LOWEST_PLAN, created_at: isoSeconds(now) };
  await store.putAccount(account);
  return account;
}

export async function createKey(
  store: KeyStore,
  input: { account: string; name: string; scopes: string[] },
  now: number,
): Promise<PublicKey & { key: string }> {
  const secret = generateSecret();
  const record: KeyRecord = {
    id: keyId(now),
    account: input.account,
    name: input.name,
    hash: await hashSecret(secret),
    prefix: maskSecret(secret),
    scopes: [...new Set(input.scopes)],
    created_at: isoSeconds(now),
    revoked_at: null,
  };
  await store.createKey(record);
  return { ...publicKey(record, null), key: secret };
}

/**
 * Active keys of the account, newest first (ids are ULIDs, so they sort by creation). With
 * `viewer` (the calling key's scopes) only the keys it may manage are listed; the operator's CLI
 * passes none and sees all. `records`, when given, are the account's records read already (keys/list-cache.ts).
 */
export async function listKeys(store: KeyStore, account: string, viewer?: readonly string[], records?: Promise<KeyRecord[]>): Promise<PublicKey[]> {
  const active = activeKeys(await (records ?? store.listKeys(account)), viewer);
  const used = await store.lastUsed(active.map((k) => k.id));
  return active.map((k) => publicKey(k, used[k.id] ?? null));
}

/**
 * `{"keys": listKeys(…)}` as JSON, the same text JSON.stringify writes, with each record's text
 * made once (GET /v1/keys, issue #33): only its last use is written per request.
 */
export async function listKeysJson(store: KeyStore, account: string, viewer: readonly string[], records: Promise<KeyRecord[]>): Promise<string> {
  const active = activeKeys(await records, viewer);
  const used = await store.lastUsed(active.map((k) => k.id));
  let out = '{"keys":[';
  for (let i = 0; i < active.length; i++) {
    const k = active[i]!;
    const lastUsed = used[k.id] ?? null;
    const around = recordText(k);
    out += (i === 0 ? "" : ",") + (around ? around[0] + JSON.stringify(lastUsed) + around[1] : JSON.stringify(publicKey(k, lastUsed)));
  }
  return `${out}]}`;
}

function activeKeys(records: KeyRecord[], viewer?: readonly string[]): KeyRecord[] {
  const active = records.filter((k) => !k.revoked_at && (!viewer || canManage(viewer, k.scopes)));
  return active.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** A record's public JSON before and after its `last_used_at` value, by record (kept while the record is). */
const texts = new WeakMap<KeyRecord, [string, string] | null>();
const LAST_USED = '"last_used_at":null,"scopes":';

function recordText(k: KeyRecord): [string, string] | null {
  let t = texts.get(k);
  if (t === undefined) {
    const whole = JSON.stringify(publicKey(k, null));
    // The first such member is the record's own: the strings before it hold no bare quote.
    const at = whole.indexOf(LAST_USED);
    t = at < 0 ? null : [whole.slice(0, at + 15), whole.slice(at + 19)];
    texts.set(k, t);
  }
  return t;
}

/**
 * Revokes a key of `account`. Another account's key, an unknown key, an already revoked one and,
 * when `manager` (the calling key's scopes) is given, a key with a scope the caller lacks all
 * answer the same 404: the caller cannot list such a key either, so nothing reveals that it exists.
 * The CLI (the operator) passes `account` null and no `manager`, and may revoke any key.
 */
export async function revokeKey(store: KeyStore, account: string | null, id: string, now: number, manager?: readonly string[]) {
  // No key has any other shape: a 10 KB "id" is answered without a lookup, and echoed cut short.
  const noSuchKey = () => new ApiError("not_found", `No active key "${echoed(id)}" in this account.`);
  const key = KEY_ID.test(id) ? await store.getKey(id) : null;
  const hidden = !key || key.revoked_at || (account !== null && key.account !== account) || (manager && !canManage(manager, key.scopes));
  if (!key || hidden) throw noSuchKey();
  const revoked = await store.revokeKey(id, isoSeconds(now));
  if (!revoked) throw noSuchKey();
  return { id, revoked: true as const, revoked_at: revoked.revoked_at as string };
}
