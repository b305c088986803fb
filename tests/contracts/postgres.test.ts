/** The port contracts against real PostgreSQL, plus what only a shared database must show. */
import pg from "pg";
import { createStorage } from "unstorage";
import dbDriver from "unstorage/drivers/db0";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KvKeyStore } from "../../adapters/storage/kv-key-store.ts";
import { KvSources } from "../../adapters/storage/kv-sources.ts";
import { PgCounters } from "../../adapters/storage/pg-counters.ts";
import { migrate, openPostgres, type PgHandle } from "../../adapters/storage/postgres.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { tempDatabase } from "../helpers/pg.ts";
import { countersContract } from "./counters-contract.ts";
import { keyStoreContract } from "./key-store-contract.ts";
import { sourcesContract } from "./sources-contract.ts";

let h: PgHandle;
let db: { url: string; drop(): Promise<void> };
beforeAll(async () => {
  db = await tempDatabase("contract");
  h = await openPostgres(db.url, new MemoryLogger());
});
afterAll(async () => {
  await h?.close();
  await db?.drop();
});

keyStoreContract("PostgreSQL (unstorage db0 driver over a pool)", async () =>
  new KvKeyStore(createStorage({ driver: dbDriver({ database: h.db, tableName: "quarry_kv" }) }), () => h.keysVersion()));
sourcesContract("PostgreSQL (unstorage db0 driver over a pool)", async (now) =>
  new KvSources(createStorage({ driver: dbDriver({ database: h.db, tableName: "quarry_kv" }) }), now));
countersContract("PostgreSQL (quarry_admit)", async () => new PgCounters(h.pool, { databaseClock: false }), { shared: true });

describe("PostgreSQL specifics", () => {
  it("a connection the server ends is logged once (idle or checked out), and the pool goes on", async () => {
    const logger = new MemoryLogger();
    const own = await openPostgres(db.url, logger);
    try {
      // Four connections of this pool: three idle, one checked out at the time.
      const clients = await Promise.all([1, 2, 3, 4].map(() => own.pool.connect()));
      const pids = await Promise.all(clients.map(async (c) => (await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number));
      const held = clients.pop()!;
      for (const c of clients) c.release();
      const admin = new pg.Client({ connectionString: db.url });
      await admin.connect();
      await admin.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [pids]);
      await admin.end();
      await new Promise((r) => setTimeout(r, 300));
      held.release(true);
      const lost = logger.lines.filter((l) => String(l.msg).startsWith("PostgreSQL connection lost"));
      expect(lost.map((l) => l.err), JSON.stringify(lost)).toHaveLength(pids.length);
      expect((await own.pool.query("SELECT 1 AS one")).rows[0].one).toBe(1);
    } finally {
      await own.close();
    }
  });

  it("migrations are safe when several instances start at once", async () => {
    const pools = Array.from({ length: 5 }, () => new pg.Pool({ connectionString: db.url, max: 2 }));
    await Promise.all(pools.map((p) => migrate(p)));
    await Promise.all(pools.map((p) => p.end()));
  });

  it("the keys version moves on every key or account write, by anyone, and not on other writes", async () => {
    const kv = createStorage({ driver: dbDriver({ database: h.db, tableName: "quarry_kv" }) });
    const v0 = await h.keysVersion();
    await kv.setItem("lastused:key_X", "2026-11-22T00:00:00Z");
    await kv.setItem("source:example.org", { seen: 1 });
    expect(await h.keysVersion()).toBe(v0);
    // another writer, straight through SQL (as another instance or the CLI would)
    await h.pool.query("INSERT INTO quarry_kv (key, value) VALUES ('account:zed', '{}')");
    const v1 = await h.keysVersion();
    expect(v1).not.toBe(v0);
    await h.pool.query("DELETE FROM quarry_kv WHERE key = 'account:zed'");
    expect(await h.keysVersion()).not.toBe(v1);
  });


  it("expired reservations are swept for every key, also keys never admitted again", async () => {
    const dead = new PgCounters(h.pool, { databaseClock: false });
    const live = new PgCounters(h.pool, { databaseClock: false });
    const t0 = Date.UTC(2026, 10, 22, 12);
    const stamp = Date.now().toString(36);
    const req = (keyId: string, now: number) => ({ keyId, now, perMinute: 1000, windowMs: 60_000, period: "2026-11", group: "scrape", quota: null });
    // An instance admits on two keys and dies before answering: its tickets are never settled.
    for (const k of [`key_sweep_a_${stamp}`, `key_sweep_b_${stamp}`]) for (let i = 0; i < 3; i++) expect((await dead.admit(req(k, t0))).ok).toBe(true);
    const left = async () =>
      Number((await h.pool.query("SELECT count(*) FROM quarry_reservations WHERE key_id LIKE $1", [`key_sweep_%_${stamp}`])).rows[0].count);
    expect(await left()).toBe(6);
    // Traffic on another key only, before and after the leases expire (RESERVATION_TTL_MS).
    await live.admit({ ...req(`key_sweep_c_${stamp}`, t0 + 1000), group: null });
    expect(await left()).toBe(6);
    await live.admit({ ...req(`key_sweep_c_${stamp}`, t0 + 121_000), group: null });
    expect(await left()).toBe(0);
  });

  it("admissions from separate pools (instances) on one key stay exact", async () => {
    const pools = Array.from({ length: 3 }, () => new pg.Pool({ connectionString: db.url, max: 5 }));
    const counters = pools.map((p) => new PgCounters(p));
    const req = { keyId: `key_multi_${Date.now()}`, now: 0, perMinute: 50, windowMs: 60_000, period: "2026-11", group: "search", quota: null };
    const results = await Promise.all(Array.from({ length: 300 }, (_, i) => counters[i % 3].admit(req)));
    expect(results.filter((r) => r.ok)).toHaveLength(50);
    await Promise.all(pools.map((p) => p.end()));
  });
});
