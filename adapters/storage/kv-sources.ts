/** The source registry ("intelligence") over unstorage: one item per hostname seen. */
import type { Storage } from "unstorage";
import { StorageError } from "../../core/errors.ts";
import { isoSeconds } from "../../core/limits/period.ts";
import type { SourceRegistry, SourceStats } from "../../core/ports.ts";

export class KvSources implements SourceRegistry {
  constructor(
    private readonly kv: Storage,
    private readonly now: () => number,
  ) {}

  async record(hostname: string, update: { backend?: string; fetched?: boolean; ok?: boolean }) {
    const id = `source:${hostname.toLowerCase().replace(/[:/\\]/g, "_")}`;
    try {
      const at = isoSeconds(this.now());
      const s = (await this.kv.getItem<SourceStats>(id)) ?? {
        hostname, seen: 0, backends: {}, fetch_ok: 0, fetch_failed: 0, first_seen: at, last_seen: at,
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
    return this.kv.getItem<SourceStats>(`source:${hostname.toLowerCase().replace(/[:/\\]/g, "_")}`);
  }

  async count() {
    return (await this.kv.getKeys("source:")).length;
  }
}
