/**
 * An account's key records, kept between requests while the key store's change mark stays the
 * same (issue #33: `GET /v1/keys` read the account's key index and every record on each call).
 * The mark is the one the request's authentication read after the request arrived
 * (keys/authenticate.ts): a list kept under that mark was loaded after a request read the same
 * mark, so it holds every key created or revoked before either request arrived, as a fresh read
 * would. A store without a mark is read every time. `last_used_at` is not kept here: it changes
 * without changing the mark, and is read fresh (keys/service.ts).
 */
import type { KeyRecord, KeyStore } from "../ports.ts";

export class KeyLists {
  private lists = new Map<string, { mark: string; records: Promise<KeyRecord[]> }>();

  constructor(
    private readonly store: KeyStore,
    private readonly maxAccounts = 1_000,
  ) {}

  records(account: string, mark: string | null | undefined): Promise<KeyRecord[]> {
    if (mark === null || mark === undefined) return this.store.listKeys(account);
    const kept = this.lists.get(account);
    if (kept && kept.mark === mark) return kept.records;
    const records = this.store.listKeys(account);
    if (this.lists.size >= this.maxAccounts) this.lists.clear();
    const entry = { mark, records };
    this.lists.set(account, entry);
    // A failed read is not kept: the next request reads again.
    records.catch(() => this.lists.get(account) === entry && this.lists.delete(account));
    return records;
  }
}
