/**
 * Escalation's per-host memory (api.md §12) over unstorage: one item per host, holding the fetch
 * step that last worked and when it is forgotten. On SQLite it is in the data file, on PostgreSQL
 * in the shared key-value table, so every instance on the same storage starts a host's reads at
 * the same step. The host is percent-encoded in the key (its `:port` and IPv6 colons meet none of
 * unstorage's key rewriting). A read past `until` is nothing, and the item is dropped.
 */
import type { Storage } from "unstorage";
import type { HostMemory, HostStep } from "../../core/ports.ts";

const PREFIX = "hoststep:";
const itemKey = (host: string) => `${PREFIX}${encodeURIComponent(host.toLowerCase())}`;
const STEPS: ReadonlySet<string> = new Set(["static", "render", "proxy"]);

export class KvHostMemory implements HostMemory {
  constructor(
    private readonly kv: Storage,
    private readonly now: () => number,
    private readonly ttlMs = 3_600_000,
  ) {}

  async get(host: string): Promise<HostStep | null> {
    const item = await this.kv.getItem<HostStep>(itemKey(host));
    if (!item || typeof item.until !== "number" || !STEPS.has(item.step)) return null;
    if (item.until <= this.now()) {
      await this.kv.removeItem(itemKey(host)).catch(() => {});
      return null;
    }
    return { step: item.step, until: item.until };
  }

  async set(host: string, step: HostStep["step"]): Promise<void> {
    await this.kv.setItem(itemKey(host), { step, until: this.now() + this.ttlMs });
  }
}
