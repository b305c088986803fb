/**
 * GET /v1/keys keeps an account's key records under the key store's change mark
 * (core/keys/list-cache.ts, issue #33). It may, only because a mark read once a write is done
 * differs from every mark read before it ended: a list loaded while a key was being created can
 * lack the key, and must never be served to a request that arrived after the key existed.
 * (tests/routes/key-list-fresh.test.ts checks the whole route against a real CLI.)
 */
import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import { describe, expect, it } from "vitest";
import { KvKeyStore } from "../../adapters/storage/kv-key-store.ts";
import { KeyLists } from "../../core/keys/list-cache.ts";
import type { KeyRecord, KeyStore } from "../../core/ports.ts";

const record = (id: string): KeyRecord => ({
  id, account: "acme", name: id, hash: id.toLowerCase().padEnd(64, "0").replace(/[^0-9a-f]/g, "0"), prefix: "qry_0000...0000", scopes: ["search"], created_at: "2026-11-28T00:00:00Z", revoked_at: null,
});

describe("the key store's change mark around a write", () => {
  it("differs, once a key is created, from the mark read while it was being written", async () => {
    const store = new KvKeyStore(createStorage({ driver: memoryDriver() }));
    const before = await store.changeMark();
    const writing = store.createKey(record("key_01JZZZZZZZZZZZZZZZZZZZZZZA"));
    const during = await store.changeMark();
    await writing;
    const after = await store.changeMark();
    expect(during).not.toBe(before);
    expect(after).not.toBe(during);
  });

  it("differs, once an account is written, from the mark read while it was being written", async () => {
    const store = new KvKeyStore(createStorage({ driver: memoryDriver() }));
    const writing = store.putAccount({ name: "acme", plan: "free", created_at: "2026-11-28T00:00:00Z" });
    const during = await store.changeMark();
    await writing;
    expect(await store.changeMark()).not.toBe(during);
  });
});

describe("KeyLists", () => {
  function counting(lists: KeyRecord[][]): { store: KeyStore; reads: () => number } {
    let n = 0;
    const store = { listKeys: async () => lists[Math.min(n++, lists.length - 1)]! } as unknown as KeyStore;
    return { store, reads: () => n };
  }

  it("serves the records it read under the same mark, and reads again under another", async () => {
    const a = record("key_01JZZZZZZZZZZZZZZZZZZZZZZA");
    const b = record("key_01JZZZZZZZZZZZZZZZZZZZZZZB");
    const { store, reads } = counting([[a], [a, b]]);
    const lists = new KeyLists(store);
    expect(await lists.records("acme", "1:7")).toEqual([a]);
    expect(await lists.records("acme", "1:7")).toEqual([a]);
    expect(reads()).toBe(1);
    expect(await lists.records("acme", "2:7")).toEqual([a, b]);
    expect(reads()).toBe(2);
  });

  it("reads every time when the store has no mark, and keeps no failed read", async () => {
    let n = 0;
    const store = { listKeys: async () => (n++ === 0 ? Promise.reject(new Error("down")) : []) } as unknown as KeyStore;
    const lists = new KeyLists(store);
    await expect(lists.records("acme", "1:1")).rejects.toThrow("down");
    expect(await lists.records("acme", "1:1")).toEqual([]);
    expect(n).toBe(2);
    await lists.records("acme", null);
    await lists.records("acme", null);
    expect(n).toBe(4);
  });
});
