/**
 * The KeyStore port over any unstorage Storage: the memory driver in tests, the db0 driver
 * (SQLite or PostgreSQL) in production. Layout:
 *   account:<name>            → Account
 *   key:<id>                  → KeyRecord
 *   keyhash:<sha256>          → key id (removed on revocation)
 *   acctkey:<account>:<id>    → 1 (the account's key index)
 *   lastused:<id>             → ISO timestamp (apart from the record, so it never races revocation)
 */
import type { Storage } from "unstorage";
import { StorageError } from "../../core/errors.ts";
import type { Account, KeyRecord, KeyStore } from "../../core/ports.ts";
import { batched } from "./coalesce.ts";

async function wrap<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new StorageError(`storage ${what} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

// unstorage rewrites keys: it drops everything after a `?` and treats ':', '/' and '\' as
// separators, so "a?x" would be account "a" (issue #17). Those characters, and '%' to keep the
// encoding one-to-one, are percent-encoded; names the CLI accepts (ACCOUNT_NAME) hold none of
// them, so every existing item keeps its key. Key ids must be ULID ids (ID) to reach a key at all.
const enc = (s: string) => s.replace(/[%?:/\\]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
const ID = /^key_[0-9A-Z]{26}$/;

function readFailed(err: unknown): StorageError {
  return err instanceof StorageError ? err : new StorageError(`storage read failed: ${(err as Error).message}`, { cause: err });
}

export class KvKeyStore implements KeyStore {
  private localWrites = 0;

  /**
   * `externalMark`, when given, changes whenever another process may have written (SQLite's
   * `PRAGMA data_version`); together with this store's own write count it lets the gateway
   * serve key lookups from memory without ever missing a revocation.
   */
  constructor(
    private readonly kv: Storage,
    private readonly externalMark?: () => number | string | Promise<number | string>,
    /** What `ping` runs instead of a read: SQLite's is a write (a file that reads but cannot be written is down too). */
    private readonly probe?: () => Promise<void>,
  ) {}

  /** The last mark made from a read of `externalMark` that was a promise, with the write count it was made with. */
  private shared: { local: number; from: Promise<number | string>; mark: Promise<string> } | null = null;

  changeMark(): Promise<string> {
    const local = this.localWrites;
    let external: number | string | Promise<number | string> | undefined;
    try {
      external = this.externalMark?.();
    } catch (err) {
      return Promise.reject(readFailed(err));
    }
    // The requests of one turn of the event loop share one read of the external mark (coalesce.ts):
    // with no write of this store between them, they share its mark too, one promise and one
    // string for all rather than an async step and a string each (issue #33).
    const s = this.shared;
    if (s !== null && s.from === external && s.local === local) return s.mark;
    const mark = Promise.resolve(external).then((v) => `${local}:${v ?? ""}`, (err) => {
      throw readFailed(err);
    });
    if (external instanceof Promise) this.shared = { local, from: external, mark };
    return mark;
  }

  getAccount(name: string) {
    return wrap("read", () => this.kv.getItem<Account>(`account:${enc(name)}`));
  }

  listAccounts() {
    return wrap("read", async () => {
      const names = await this.kv.getKeys("account:");
      const accounts = await Promise.all(names.map((k) => this.kv.getItem<Account>(k)));
      return accounts.filter((a): a is Account => a !== null);
    });
  }

  putAccount(account: Account) {
    this.localWrites++;
    return wrap("write", async () => {
      await this.kv.setItem(`account:${enc(account.name)}`, account);
      // Again once written: a mark read while the write was under way may have seen the old item.
      this.localWrites++;
    });
  }

  getKeyByHash(hash: string) {
    if (!/^[0-9a-f]{64}$/.test(hash)) return Promise.resolve(null);
    return wrap("read", async () => {
      const id = await this.kv.getItem<string>(`keyhash:${hash}`);
      return id ? this.kv.getItem<KeyRecord>(`key:${id}`) : null;
    });
  }

  getKey(id: string) {
    if (!ID.test(id)) return Promise.resolve(null);
    return wrap("read", () => this.kv.getItem<KeyRecord>(`key:${id}`));
  }

  createKey(key: KeyRecord) {
    this.localWrites++;
    return wrap("write", async () => {
      await this.kv.setItem(`key:${key.id}`, key);
      await this.kv.setItem(`acctkey:${enc(key.account)}:${key.id}`, 1);
      // Last: the secret resolves only once the record and the index exist.
      await this.kv.setItem(`keyhash:${key.hash}`, key.id);
      // Again once written: a list read under the mark of the write's start may lack the key (keys/list-cache.ts).
      this.localWrites++;
    });
  }

  listKeys(account: string) {
    return wrap("read", async () => {
      const base = `acctkey:${enc(account)}:`;
      const ids = (await this.kv.getKeys(base)).map((k) => k.slice(k.lastIndexOf(":") + 1));
      const records = await Promise.all(ids.map((id) => this.kv.getItem<KeyRecord>(`key:${id}`)));
      return records.filter((r): r is KeyRecord => r !== null);
    });
  }

  revokeKey(id: string, revokedAt: string) {
    if (!ID.test(id)) return Promise.resolve(null);
    this.localWrites++;
    return wrap("write", async () => {
      const key = await this.kv.getItem<KeyRecord>(`key:${id}`);
      if (!key) return null;
      // First: the secret stops resolving, so the very next request fails even mid-revocation.
      await this.kv.removeItem(`keyhash:${key.hash}`);
      const revoked = { ...key, revoked_at: key.revoked_at ?? revokedAt };
      await this.kv.setItem(`key:${id}`, revoked);
      this.localWrites++;
      return revoked;
    });
  }

  touchKey(id: string, at: string) {
    return wrap("write", () => this.kv.setItem(`lastused:${id}`, at));
  }

  lastUsed(ids: string[]) {
    return wrap("read", async () => {
      const values = await Promise.all(ids.map((id) => this.lastUsedOf(id)));
      return Object.fromEntries(ids.map((id, i) => [id, values[i] ?? null]));
    });
  }

  /**
   * Keys' last uses asked for in this turn of the event loop, read together at its end (`batched`,
   * as the PostgreSQL counters are): each caller gets a value read after it asked, as fresh as a read
   * of its own, and a key listed by 50 requests of one turn is read once, not 50 times (issue #33:
   * the reads were a seventh of GET /v1/keys' CPU on Deno). A read that fails takes the turn's reads
   * one by one again, so it fails only the callers of its own key.
   */
  private readonly lastUsedOf = batched<string, string | null>(
    async (ids) => {
      const unique = [...new Set(ids)];
      const values = await Promise.all(unique.map((id) => this.kv.getItem<string>(`lastused:${id}`)));
      const byId = new Map(unique.map((id, i) => [id, values[i] ?? null]));
      return ids.map((id) => byId.get(id) ?? null);
    },
    async (id) => (await this.kv.getItem<string>(`lastused:${id}`)) ?? null,
    () => true,
  );

  isEmpty() {
    return wrap("read", async () => (await this.kv.getKeys("key:")).length === 0);
  }

  ping() {
    return wrap("ping", async () => {
      if (this.probe) await this.probe();
      else await this.kv.hasItem("ping");
    });
  }
}
