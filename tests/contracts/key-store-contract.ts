/** The KeyStore contract: every implementation must pass it. */
import { beforeEach, describe, expect, it } from "vitest";
import type { KeyRecord, KeyStore } from "../../core/ports.ts";

let seq = 0;
function record(account: string, over: Partial<KeyRecord> = {}): KeyRecord {
  const n = String(seq++).padStart(6, "0");
  return {
    id: `key_01KEYSTORECONTRACT${n}${"0".repeat(26 - 18 - n.length)}`.slice(0, 30),
    account,
    name: "k",
    hash: `${n}${"ab".repeat(29)}`.slice(0, 64),
    prefix: "qry_abcd...ef01",
    scopes: ["search"],
    created_at: "2026-11-22T12:00:00Z",
    revoked_at: null,
    ...over,
  };
}

export function keyStoreContract(name: string, make: () => Promise<KeyStore>) {
  describe(`KeyStore contract: ${name}`, () => {
    let s: KeyStore;
    let account: string;
    beforeEach(async () => {
      s = await make();
      account = `acct-${process.pid}-${seq++}`;
    });

    it("stores and reads accounts", async () => {
      expect(await s.getAccount(account)).toBeNull();
      await s.putAccount({ name: account, plan: "free", created_at: "2026-11-22T12:00:00Z" });
      await s.putAccount({ name: account, plan: "pro", created_at: "2026-11-22T12:00:00Z" });
      expect(await s.getAccount(account)).toEqual({ name: account, plan: "pro", created_at: "2026-11-22T12:00:00Z" });
    });

    it("finds a key by hash and by id, and lists it under its account only", async () => {
      const k = record(account);
      await s.createKey(k);
      expect(await s.getKeyByHash(k.hash)).toEqual(k);
      expect(await s.getKey(k.id)).toEqual(k);
      expect((await s.listKeys(account)).map((x) => x.id)).toEqual([k.id]);
      expect(await s.listKeys(`${account}-other`)).toEqual([]);
      expect(await s.getKeyByHash("f".repeat(64))).toBeNull();
      expect(await s.isEmpty()).toBe(false);
    });

    it("revocation stops the hash resolving at once and keeps the record", async () => {
      const k = record(account);
      await s.createKey(k);
      const r = await s.revokeKey(k.id, "2026-11-22T13:00:00Z");
      expect(r?.revoked_at).toBe("2026-11-22T13:00:00Z");
      const byHash = await s.getKeyByHash(k.hash);
      expect(byHash === null || byHash.revoked_at !== null).toBe(true);
      expect((await s.getKey(k.id))?.revoked_at).toBe("2026-11-22T13:00:00Z");
      expect(await s.revokeKey("key_NOPE", "x")).toBeNull();
    });

    it("records last use apart from the record", async () => {
      const a = record(account);
      const b = record(account);
      await s.createKey(a);
      await s.createKey(b);
      await s.touchKey(a.id, "2026-11-22T12:30:00Z");
      expect(await s.lastUsed([a.id, b.id])).toEqual({ [a.id]: "2026-11-22T12:30:00Z", [b.id]: null });
      await s.revokeKey(a.id, "2026-11-22T13:00:00Z");
      await s.touchKey(a.id, "2026-11-22T13:00:01Z");
      expect((await s.getKey(a.id))?.revoked_at).toBe("2026-11-22T13:00:00Z");
    });

    it("keeps accounts apart whatever their names hold (unstorage would fold `?`, `:`, `/`)", async () => {
      const names = [account, `${account}?x`, `${account}:x`, `${account}/x`, `${account}\\x`, `${account}%3Fx`, `${account}::x`];
      for (const [i, name] of names.entries()) await s.putAccount({ name, plan: `plan${i}`, created_at: "2026-11-22T12:00:00Z" });
      for (const [i, name] of names.entries()) expect((await s.getAccount(name))?.plan, name).toBe(`plan${i}`);
      // Listed each under its own name (the store may hold other tests' accounts too).
      const listed = (await s.listAccounts()).filter((a) => a.name.startsWith(account));
      expect(listed.map((a) => [a.name, a.plan]).sort()).toEqual(names.map((n, i) => [n, `plan${i}`]).sort());
      const k = record(`${account}:x`);
      await s.createKey(k);
      expect((await s.listKeys(`${account}:x`)).map((x) => x.id)).toEqual([k.id]);
      expect(await s.listKeys(account)).toEqual([]);
      expect(await s.listKeys(`${account}?y`)).toEqual([]);
    });

    it("an id or hash with anything after a `?` finds nothing", async () => {
      const k = record(account);
      await s.createKey(k);
      expect(await s.getKey(`${k.id}?x`)).toBeNull();
      expect(await s.getKeyByHash(`${k.hash}?x`)).toBeNull();
      expect(await s.revokeKey(`${k.id}?x`, "2026-11-22T13:00:00Z")).toBeNull();
      expect((await s.getKey(k.id))?.revoked_at).toBeNull();
    });

    it("answers ping", async () => {
      await expect(s.ping()).resolves.toBeUndefined();
    });
  });
}
