/**
 * GET /v1/keys writes its body from each record's text made once (core/keys/service.ts,
 * `listKeysJson`, issue #33): it must be the text JSON.stringify writes for `{keys: listKeys(…)}`,
 * whatever the names hold, with each key's last use as it is now.
 */
import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import { describe, expect, it } from "vitest";
import { KvKeyStore } from "../../adapters/storage/kv-key-store.ts";
import { listKeys, listKeysJson } from "../../core/keys/service.ts";
import type { KeyRecord } from "../../core/ports.ts";

const NAMES = [
  "plain", 'quote " and ,"last_used_at":null,"scopes":', "back\\slash", "é→ and 😀", "tab\there", '"last_used_at":null,"scopes":["keys"]}',
];

const record = (i: number, name: string, scopes: string[], revoked = false): KeyRecord => ({
  id: `key_01JZZZZZZZZZZZZZZZZZZZZZ${String.fromCharCode(65 + i)}`, account: "acme", name, hash: String(i).padStart(64, "0"),
  prefix: "qry_0000...0000", scopes, created_at: "2026-11-28T00:00:00Z", revoked_at: revoked ? "2026-11-28T00:00:01Z" : null,
});

describe("listKeysJson", () => {
  it("is JSON.stringify's text for the same list, names of every kind, last uses as they change", async () => {
    const store = new KvKeyStore(createStorage({ driver: memoryDriver() }));
    const records = NAMES.map((n, i) => record(i, n, i % 2 ? ["search"] : ["search", "keys"], i === 3));
    for (const r of records) await store.createKey(r);
    const viewer = ["search", "keys"];
    const read = () => store.listKeys("acme");
    const kept = read();
    expect(await listKeysJson(store, "acme", viewer, kept)).toBe(JSON.stringify({ keys: await listKeys(store, "acme", viewer) }));
    await store.touchKey(records[0]!.id, "2026-11-29T10:00:00Z");
    await store.touchKey(records[4]!.id, "2026-11-29T10:00:01Z");
    // The same record objects again (their text kept), with the last uses read afresh.
    const again = await listKeysJson(store, "acme", viewer, kept);
    expect(again).toBe(JSON.stringify({ keys: await listKeys(store, "acme", viewer) }));
    expect(JSON.parse(again).keys.find((k: { id: string }) => k.id === records[4]!.id).last_used_at).toBe("2026-11-29T10:00:01Z");
    // A lesser viewer sees fewer; none at all is an empty list.
    expect(await listKeysJson(store, "acme", ["search"], read())).toBe(JSON.stringify({ keys: await listKeys(store, "acme", ["search"]) }));
    expect(await listKeysJson(store, "nobody", viewer, store.listKeys("nobody"))).toBe('{"keys":[]}');
  });
});
