/**
 * The source registry ("intelligence") over unstorage: one item per site seen.
 *
 * A site is its bare host (core/ranking's `bareHost`: lowercase, no `www.`, no trailing dot),
 * the same name ranking looks the prior up by. Callers record the raw hostname of whatever URL
 * they fetched (`www.example.com`); normalising here, on record and on get alike, is what lets
 * that history reach the ranking of `example.com` (issue #17). The host is percent-encoded in
 * the item key, so nothing in it (`:` of IPv6, `?`, `/`) meets unstorage's key rewriting.
 */
import type { Storage } from "unstorage";
import { StorageError } from "../../core/errors.ts";
import { isoSeconds } from "../../core/limits/period.ts";
import type { SourceRegistry, SourceStats } from "../../core/ports.ts";
import { bareHost } from "../../core/ranking/normalize-url.ts";

const PREFIX = "source:";
const itemKey = (site: string) => `${PREFIX}${encodeURIComponent(site)}`;

export class KvSources implements SourceRegistry {
  constructor(
    private readonly kv: Storage,
    private readonly now: () => number,
  ) {}

  async record(hostname: string, update: { backend?: string; fetched?: boolean; ok?: boolean }) {
    const site = bareHost(hostname);
    if (!site) return;
    const id = itemKey(site);
    try {
      const at = isoSeconds(this.now());
      const s = (await this.kv.getItem<SourceStats>(id)) ?? {
        hostname: site, seen: 0, backends: {}, fetch_ok: 0, fetch_failed: 0, first_seen: at, last_seen: at,
      };
      if (update.backend) {
        s.seen++;
        s.backends[update.backend] = (s.backends[update.backend] ?? 0) + 1;
      }
      if (update.fetched) update.ok ? s.fetch_ok++ : s.fetch_failed++;
      s.last_seen = at;
      await this.kv.setItem(id, s);
    } catch (err) {
      throw new StorageError(`source registry: ${(err as Error).message}`, { cause: err });
    }
  }

  async get(hostname: string) {
    const site = bareHost(hostname);
    if (!site) return null;
    try {
      return await this.kv.getItem<SourceStats>(itemKey(site));
    } catch (err) {
      throw new StorageError(`source registry: ${(err as Error).message}`, { cause: err });
    }
  }

  async count() {
    return (await this.kv.getKeys(PREFIX)).length;
  }
}
